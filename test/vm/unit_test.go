package vm

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// readCpio is a minimal newc reader: name -> (mode, data). It checks the magic and the 4-byte alignment.
func readCpio(t *testing.T, b []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for off := 0; ; {
		if string(b[off:off+6]) != "070701" {
			t.Fatalf("offset %d: magic %q, want 070701", off, b[off:off+6])
		}
		field := func(i int) int {
			v, err := strconv.ParseUint(string(b[off+6+8*i:off+14+8*i]), 16, 32)
			if err != nil {
				t.Fatalf("offset %d field %d: %v", off, i, err)
			}
			return int(v)
		}
		mode, size, namesize := field(1), field(6), field(11)
		name := string(b[off+110 : off+110+namesize-1])
		off = align4(off + 110 + namesize)
		if name == "TRAILER!!!" {
			if off != len(b) {
				t.Errorf("trailer ends at %d, archive is %d bytes", off, len(b))
			}
			return out
		}
		out[name] = strconv.FormatInt(int64(mode), 8) + " " + string(b[off:off+size])
		off = align4(off + size)
	}
}

func align4(n int) int { return (n + 3) &^ 3 }

func TestCpioWritesNewcEntriesAlignedTo4Bytes(t *testing.T) {
	var buf bytes.Buffer
	c := NewCpio(&buf)
	c.Dir("bin", 0o755)
	c.File("bin/x", 0o755, []byte("hello"))
	c.Symlink("bin/sh", "busybox")
	c.CharDev("dev/console", 0o600, 5, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got := readCpio(t, buf.Bytes())
	want := map[string]string{"bin": "40755 ", "bin/x": "100755 hello", "bin/sh": "120777 busybox", "dev/console": "20600 "}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("archive (-got +want):\n%s", d)
	}
}

func TestParseOutputSplitsProgramsAndReportsAnEarlyEnd(t *testing.T) {
	out := "boot noise\n" + markBegin + "a\nline 1\r\nline 2\n\n" + markEnd + "a exit 0 after 1.50s\n" +
		markBegin + "b\nfail\n\n" + markEnd + "b exit 2 after 0.01s\n" + markDone + "\n"
	got, err := parseOutput(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []Result{{Name: "a", Output: "line 1\nline 2\n\n", Exit: 0, Elapsed: "1.50s"}, {Name: "b", Output: "fail\n\n", Exit: 2, Elapsed: "0.01s"}}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("parseOutput (-got +want):\n%s", d)
	}
	if _, err := parseOutput(markBegin + "a\npanic: oops\n"); err == nil || !strings.Contains(err.Error(), "inside a") {
		t.Errorf("output cut inside a program: error %v, want one naming it", err)
	}
	if _, err := parseOutput(markError + "mount cgroup2: EBUSY\n"); err == nil || !strings.Contains(err.Error(), "EBUSY") {
		t.Errorf("guest init error: %v, want it passed on", err)
	}
}

func TestRampOfIsThePeakAndTheFastestGrowthOverThreeSeconds(t *testing.T) {
	lines := []string{
		markSample + "10.0 0 oom_kill 0 MemAvailable: 100 kB",
		markSample + "11.0 10485760 oom_kill 0 MemAvailable: 100 kB",
		markSample + "12.0 20971520 oom_kill 0 MemAvailable: 100 kB",
		markSample + "13.0 52428800 oom_kill 0 MemAvailable: 100 kB", // 50 MiB after 3 s: 16.7 MiB/s
		markSample + "14.0 94371840 oom_kill 1 MemAvailable: 100 kB", // 90 MiB: (90-10)/3 = 26.7 MiB/s
		markSample + "garbage",
	}
	peak, rate := rampOf(lines)
	if peak != 90 {
		t.Errorf("peak %.1f MiB, want 90", peak)
	}
	if want := 80.0 / 3; rate < want-0.01 || rate > want+0.01 {
		t.Errorf("ramp %.2f MiB/s, want %.2f", rate, want)
	}
	if s, ok := parseSample(lines[4]); !ok || s.oomKills != 1 {
		t.Errorf("parseSample(%q) = %+v, %v; want oom_kill 1", lines[4], s, ok)
	}
}

func TestWithLibrariesNamesTheLoaderOfADynamicBinary(t *testing.T) {
	files, err := WithLibraries("/bin/sh", "/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	if files[0].Guest != "/bin/sh" {
		t.Errorf("first file %+v, want the binary", files[0])
	}
	loader := false
	for _, f := range files[1:] {
		if strings.Contains(f.Guest, "ld-linux") {
			loader = true
		}
	}
	if len(files) > 1 && !loader {
		t.Errorf("libraries %+v of a dynamic /bin/sh lack the loader", files[1:])
	}
}

func TestAddFilesCreatesEachParentDirectoryOnce(t *testing.T) {
	var buf bytes.Buffer
	c := NewCpio(&buf)
	err := addFiles(c, []File{
		{Guest: "/usr/bin/a", Data: []byte("a")},
		{Guest: "/usr/sbin/b", Data: []byte("b"), Mode: 0o644},
		{Guest: "/tmp/c", Data: []byte("c")}, // /tmp is made by writeInitramfs
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"usr": "40755 ", "usr/bin": "40755 ", "usr/bin/a": "100755 a",
		"usr/sbin": "40755 ", "usr/sbin/b": "100644 b", "tmp/c": "100755 c"}
	if d := cmp.Diff(readCpio(t, buf.Bytes()), want); d != "" {
		t.Errorf("archive (-got +want):\n%s", d)
	}
	if err := addFiles(NewCpio(&buf), []File{{Guest: "relative", Data: nil}}); err == nil {
		t.Error("a relative guest path: no error")
	}
}
