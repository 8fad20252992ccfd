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
