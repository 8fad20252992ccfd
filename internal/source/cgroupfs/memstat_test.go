package cgroupfs_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
)

func TestReclaimStat(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    cgroupfs.Version
		in   string
		want signal.MemoryStat
	}{
		{name: "v1 reads the hierarchical total_ counters, not the cgroup's own", v: cgroupfs.V1,
			in: "active_file 1\ninactive_file 2\ntotal_active_file 10\ntotal_inactive_file 20\ntotal_dirty 3\n" +
				"total_writeback 4\ntotal_shmem 5\ntotal_workingset_refault_file 6\n",
			want: signal.MemoryStat{ActiveFile: u(10), InactiveFile: u(20), Dirty: u(3), Writeback: u(4), Shmem: u(5),
				WorkingsetRefaultFile: u(6), PageSize: 4096}},
		{name: "v1 has no workingset_activate: absent, not zero", v: cgroupfs.V1,
			in:   "total_active_file 10\ntotal_inactive_file 20\n",
			want: signal.MemoryStat{ActiveFile: u(10), InactiveFile: u(20), PageSize: 4096}},
		{name: "v2 names dirty and writeback file_dirty and file_writeback", v: cgroupfs.V2,
			in: "active_file 10\ninactive_file 20\nfile_dirty 3\nfile_writeback 4\nshmem 5\n" +
				"workingset_refault_file 6\nworkingset_activate_file 7\nworkingset_refault_anon 99\n",
			want: signal.MemoryStat{ActiveFile: u(10), InactiveFile: u(20), Dirty: u(3), Writeback: u(4), Shmem: u(5),
				WorkingsetRefaultFile: u(6), WorkingsetActivateFile: u(7), PageSize: 4096}},
		{name: "before 5.9 the workingset counters have no _file suffix", v: cgroupfs.V2,
			in:   "workingset_refault 6\nworkingset_activate 7\n",
			want: signal.MemoryStat{WorkingsetRefaultFile: u(6), WorkingsetActivateFile: u(7), PageSize: 4096}},
		{name: "the _file counter wins over the pre-5.9 name", v: cgroupfs.V2,
			in:   "workingset_refault 1\nworkingset_refault_file 6\n",
			want: signal.MemoryStat{WorkingsetRefaultFile: u(6), PageSize: 4096}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stat, err := cgroupfs.ParseMemoryStat(strings.NewReader(tc.in), "memory.stat")
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(cgroupfs.ReclaimStat(stat, tc.v, 4096), tc.want); d != "" {
				t.Errorf("ReclaimStat (-got +want):\n%s", d)
			}
		})
	}
}

func TestWithVmstatFillsOnlyMissingCounters(t *testing.T) {
	vm := map[string]uint64{"workingset_refault_file": 100, "workingset_activate_file": 50}
	got := cgroupfs.WithVmstat(signal.MemoryStat{WorkingsetRefaultFile: u(7)}, vm)
	want := signal.MemoryStat{WorkingsetRefaultFile: u(7), WorkingsetActivateFile: u(50)}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("WithVmstat (-got +want):\n%s", d)
	}
	if got := cgroupfs.WithVmstat(signal.MemoryStat{}, nil); got.WorkingsetActivateFile != nil || got.WorkingsetRefaultFile != nil {
		t.Errorf("WithVmstat without vmstat counters = %+v, want them absent", got)
	}
}

// TestReclaimFieldsOnFixtures reads the node's, the pods cgroup's and each pod's reclaim fields from the
// captured v1 tree and the written v2 trees (make-v2.sh: dirty file/16, writeback file/32, refaults
// file/32KiB pages, activations half of them).
func TestReclaimFieldsOnFixtures(t *testing.T) {
	v2 := func(file, inactive uint64) signal.MemoryStat {
		return signal.MemoryStat{ActiveFile: u(file - inactive), InactiveFile: u(inactive), Dirty: u(file / 16),
			Writeback: u(file / 32), Shmem: u(0), WorkingsetRefaultFile: u(file / 32768),
			WorkingsetActivateFile: u(file / 32768 / 2), PageSize: 4096}
	}
	v1 := func(active, inactive, dirty, shmem, refault uint64) signal.MemoryStat {
		return signal.MemoryStat{ActiveFile: u(active), InactiveFile: u(inactive), Dirty: u(dirty), Writeback: u(0),
			Shmem: u(shmem), WorkingsetRefaultFile: u(refault), PageSize: 4096}
	}
	for _, tc := range []struct {
		name, root string
		node, pods signal.MemoryStat
		podB       signal.MemoryStat
	}{
		{"v1 captured host", "cgroupv1-cgroupfs", v1(2277781504, 1516650496, 184123392, 9068544, 110870),
			v1(540672, 0, 0, 0, 132), v1(532480, 0, 0, 0, 130)},
		{"v2 systemd", "cgroupv2-systemd", v2(2048*mib, 1536*mib), v2(256*mib, 256*mib), v2(100*mib, 100*mib)},
		{"v2 cgroupfs", "cgroupv2-cgroupfs", v2(2048*mib, 1536*mib), v2(256*mib, 256*mib), v2(100*mib, 100*mib)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &cgroupfs.Reader{Layout: detect(t, filepath.Join("testdata", tc.root)), PageSize: 4096}
			node, err := r.NodeMemoryStat()
			if err != nil {
				t.Errorf("NodeMemoryStat: %v", err)
			} else if d := cmp.Diff(node, tc.node); d != "" {
				t.Errorf("NodeMemoryStat (-got +want):\n%s", d)
			}
			pods, err := r.PodsMemoryStat()
			if err != nil {
				t.Errorf("PodsMemoryStat: %v", err)
			} else if d := cmp.Diff(pods, tc.pods); d != "" {
				t.Errorf("PodsMemoryStat (-got +want):\n%s", d)
			}
			ps, err := r.Pods(now)
			if err != nil {
				t.Fatalf("Pods: %v", err)
			}
			if d := cmp.Diff(ps[uidB].Memory, &tc.podB); d != "" {
				t.Errorf("pod %s Memory (-got +want):\n%s", uidB, d)
			}
		})
	}
}

func TestPodsMemoryStatWithoutPodsCgroupIsAnExpectedAbsence(t *testing.T) {
	r := &cgroupfs.Reader{Layout: cgroupfs.Layout{Version: cgroupfs.V2, Memory: t.TempDir()}}
	if _, err := r.PodsMemoryStat(); !errors.Is(err, cgroupfs.ErrNoPodsCgroup) {
		t.Errorf("PodsMemoryStat error = %v, want ErrNoPodsCgroup", err)
	}
}

// FuzzReclaimStat: whatever memory.stat parses to, every field ReclaimStat sets is the value of one of
// its keys, and a field is nil only when none of its keys is in the file.
func FuzzReclaimStat(f *testing.F) {
	f.Add("total_active_file 10\ntotal_inactive_file 20\ntotal_dirty 3\n", true)
	f.Add("active_file 10\nworkingset_activate 7\nworkingset_activate_file 8\n", false)
	f.Add("file_dirty x\n", false)
	f.Fuzz(func(t *testing.T, in string, isV1 bool) {
		stat, err := cgroupfs.ParseMemoryStat(strings.NewReader(in), "memory.stat")
		if err != nil {
			return
		}
		v, prefix := cgroupfs.V2, ""
		if isV1 {
			v, prefix = cgroupfs.V1, "total_"
		}
		got := cgroupfs.ReclaimStat(stat, v, 4096)
		check := func(field string, p *uint64, keys ...string) {
			for _, k := range keys {
				if want, ok := stat[prefix+k]; ok {
					if p == nil || *p != want {
						t.Errorf("%s = %v, want %d from %s", field, p, want, prefix+k)
					}
					return
				}
			}
			if p != nil {
				t.Errorf("%s = %d without any of %v in the file", field, *p, keys)
			}
		}
		check("ActiveFile", got.ActiveFile, "active_file")
		check("WorkingsetRefaultFile", got.WorkingsetRefaultFile, "workingset_refault_file", "workingset_refault")
		check("WorkingsetActivateFile", got.WorkingsetActivateFile, "workingset_activate_file", "workingset_activate")
		if isV1 {
			check("Dirty", got.Dirty, "dirty")
		} else {
			check("Dirty", got.Dirty, "file_dirty")
		}
	})
}
