package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// validCgroups is a cgroups.json of two reads 100ms apart.
const validCgroups = `{
  "kind": "CgroupSamples",
  "layout": "cgroup v1 memory at /sys/fs/cgroup/memory, driver cgroupfs (kubepods)",
  "every": "100ms",
  "samples": [
    {"time": "2026-12-05T03:32:41.800Z",
     "memoryAvailable": {"available": 17000000000, "capacity": 20000000000},
     "allocatableMemoryAvailable": {"available": 700000000, "capacity": 1073741824},
     "podsCgroup": {"usage": 400000000, "workingSet": 373741824, "inactiveFile": 26258176},
     "pods": {"uid-hog-0": {"usage": 268435456, "workingSet": 268435456, "inactiveFile": 0, "activeFile": 0}}},
    {"time": "2026-12-05T03:32:41.900Z",
     "pods": {"uid-hog-0": {"usage": 278435456, "workingSet": 278435456, "inactiveFile": 0}},
     "errors": ["memory.available: open /proc/meminfo: no such file or directory"]}
  ]
}`

func TestParseCgroupSamples(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		// want are substrings of the error ("" : none).
		want []string
	}{
		{"two reads in time order parse", validCgroups, nil},
		{"a read without a signal is valid: absent is not zero", `{"kind": "CgroupSamples", "samples": [{"time": "2026-12-05T03:32:41Z"}]}`, nil},
		{"another kind is refused, naming it", `{"kind": "Summary", "samples": []}`, []string{"cgroups.json", "field kind", `value "Summary"`}},
		{"an interval that is not a duration is refused", `{"kind": "CgroupSamples", "every": "fast"}`, []string{"field every", `value "fast"`}},
		{"a read without its time is refused", `{"kind": "CgroupSamples", "samples": [{"pods": {}}]}`, []string{"field samples[0].time", "missing"}},
		{"reads out of time order are refused",
			`{"kind": "CgroupSamples", "samples": [{"time": "2026-12-05T03:32:42Z"}, {"time": "2026-12-05T03:32:41Z"}]}`,
			[]string{"field samples[1].time", `value "2026-12-05T03:32:41Z"`, "before samples[0]"}},
		{"a working set above the usage is refused",
			`{"kind": "CgroupSamples", "samples": [{"time": "2026-12-05T03:32:41Z", "pods": {"u": {"usage": 1, "workingSet": 2}}}]}`,
			[]string{"field samples[0].pods.u.workingSet", `value "2"`, "above the usage 1"}},
		{"a signal without capacity is refused",
			`{"kind": "CgroupSamples", "samples": [{"time": "2026-12-05T03:32:41Z", "memoryAvailable": {"available": 1}}]}`,
			[]string{"field samples[0].memoryAvailable.capacity", `value "0"`}},
		{"a pod with an empty uid is refused",
			`{"kind": "CgroupSamples", "samples": [{"time": "2026-12-05T03:32:41Z", "pods": {"": {"usage": 1}}}]}`,
			[]string{"field samples[0].pods", "empty"}},
		{"a number of the wrong type names its line and field",
			`{"kind": "CgroupSamples",
  "samples": [{"time": "2026-12-05T03:32:41Z", "pods": {"u": {"usage": -1}}}]}`, []string{"line 2", "usage"}},
		{"an empty file is refused", ``, []string{"cgroups.json", "empty file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCgroupSamples(strings.NewReader(tc.in), "snap/cgroups.json")
			if len(tc.want) == 0 {
				if err != nil {
					t.Errorf("ParseCgroupSamples() = %v, want no error", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("ParseCgroupSamples() = nil, want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseCgroupSamples() = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestCgroupSamplesRoundTrip(t *testing.T) {
	cs, err := ParseCgroupSamples(strings.NewReader(validCgroups), "cgroups.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := marshalCgroupSamples(*cs)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseCgroupSamples(bytes.NewReader(data), "cgroups.json")
	if err != nil {
		t.Fatalf("parse of the written file: %v", err)
	}
	if diff := cmp.Diff(cs, back); diff != "" {
		t.Errorf("written and read back (-first +second):\n%s", diff)
	}
	local := localSamples(back)
	if len(local) != 2 || local[0].Memory.PodsWorkingSet != 1073741824-700000000 || !local[0].Memory.PodsKnown ||
		local[1].Memory.PodsKnown || local[1].Memory.NodeCapacity != 0 {
		t.Errorf("localSamples = %+v, want the first with both signals and the second with neither (absent, not zero)", local)
	}
	if ws := local[1].Pods["uid-hog-0"].MemoryWorkingSet; ws == nil || *ws != 278435456 {
		t.Errorf("hog-0's second read = %v, want 278435456", ws)
	}
}

func TestASnapshotWithoutCgroupsIsReadAsBeforeAndOneWithThemKeepsThem(t *testing.T) {
	src := filepath.Join("testdata", "snapshots", "healthy")
	plain, err := LoadSnapshotDir(os.DirFS(src), src)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Cgroups != nil {
		t.Errorf("Cgroups of a snapshot without %s = %+v, want nil", FileCgroups, plain.Cgroups)
	}
	cs, err := ParseCgroupSamples(strings.NewReader(validCgroups), FileCgroups)
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.SetCgroups(*cs); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := plain.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	back, err := LoadSnapshotDir(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	if back.Cgroups == nil || len(back.Cgroups.Samples) != 2 || !back.Cgroups.Samples[1].Time.Equal(time.Date(2026, 12, 5, 3, 32, 41, 9e8, time.UTC)) {
		t.Errorf("Cgroups read back = %+v, want the two reads", back.Cgroups)
	}
	if err := os.WriteFile(filepath.Join(dir, FileCgroups), []byte(`{"kind": "CgroupSamples", "samples": [{}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSnapshotDir(os.DirFS(dir), dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, FileCgroups)) {
		t.Errorf("LoadSnapshotDir with a bad %s = %v, want an error naming its path", FileCgroups, err)
	}
}

func FuzzParseCgroupSamples(f *testing.F) {
	f.Add([]byte(validCgroups))
	f.Add([]byte(`{"kind": "CgroupSamples", "samples": [{"time": "2026-12-05T03:32:41Z"}]}`))
	f.Add([]byte(`{"kind": "CgroupSamples", "samples": [{"time": "2026-12-05T03:32:41Z", "pods": {"u": {"usage": 1, "workingSet": 2}}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cs, err := ParseCgroupSamples(bytes.NewReader(data), "cgroups.json")
		if err != nil {
			if cs != nil {
				t.Errorf("error %v with a value %+v", err, cs)
			}
			return
		}
		for i, x := range cs.Samples {
			if x.Time.IsZero() || i > 0 && x.Time.Before(cs.Samples[i-1].Time) {
				t.Errorf("samples[%d].time %s accepted: zero or out of order", i, x.Time)
			}
			for uid, m := range x.Pods {
				if uid == "" || m.WorkingSet > m.Usage {
					t.Errorf("pod %q %+v accepted", uid, m)
				}
			}
		}
		data, err = marshalCgroupSamples(*cs)
		if err != nil {
			t.Fatalf("marshal of a parsed file: %v", err)
		}
		if _, err := ParseCgroupSamples(bytes.NewReader(data), "cgroups.json"); err != nil {
			t.Errorf("a parsed file written back does not parse: %v", err)
		}
	})
}

func TestCgroupMismatchWarnsWhenTheKubeletsPodsCgroupIsNotTheOneRead(t *testing.T) {
	for _, tc := range []struct {
		name, config, driver string
		want                 string // substring; "" : no warning
	}{
		{"the kubelet's defaults and the cgroupfs driver agree", `{"kind": "KubeletConfiguration"}`, "cgroupfs", ""},
		{"configz with systemd and root / agrees with kubepods.slice",
			`{"kubeletconfig": {"cgroupDriver": "systemd", "cgroupRoot": "/"}}`, "systemd", ""},
		{"another driver than the kubelet's is named", `{"kubeletconfig": {"cgroupDriver": "systemd"}}`, "cgroupfs",
			`cgroupDriver is "systemd"`},
		{"a cgroupRoot below the top is named", `{"cgroupRoot": "/kube"}`, "cgroupfs", `cgroupRoot is "/kube"`},
		{"no pods cgroup at all is named", `{}`, "", "no pods cgroup"},
		{"an unreadable configuration gives no warning", `not json`, "cgroupfs", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := cgroupMismatch([]byte(tc.config), tc.driver)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Errorf("cgroupMismatch(%s, %q) = %q, want %q", tc.config, tc.driver, got, tc.want)
			}
		})
	}
}
