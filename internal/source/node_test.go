package source_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/source/statfs"
)

var now = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

func layout(t *testing.T, root string) cgroupfs.Layout {
	t.Helper()
	l, err := cgroupfs.Detector{Root: root, Magic: func(string) (int64, error) { return 0, errors.New("fixture") }}.Detect()
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestSnapshotOfV2SystemdFixture(t *testing.T) {
	n := &source.Node{
		Proc:   procfs.NewReader("procfs/testdata/proc-k6.18.44"),
		Cgroup: &cgroupfs.Reader{Layout: layout(t, "cgroupfs/testdata/cgroupv2-systemd")},
	}
	s, err := n.Snapshot(now)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	if d := cmp.Diff(s.Signals(), []signal.Signal{signal.AllocatableMemoryAvailable, signal.MemoryAvailable, signal.PIDAvailable}); d != "" {
		t.Errorf("observed signals (-got +want):\n%s", d)
	}
	for sig, o := range s.Observations {
		if !o.Time.Equal(now) {
			t.Errorf("%s observed at %v, want the caller's now", sig, o.Time)
		}
	}
	if len(s.Pods) != 3 {
		t.Errorf("Snapshot has %d pods, want 3", len(s.Pods))
	}
	var scopes []string
	for _, p := range s.PSI {
		scopes = append(scopes, p.Scope+"/"+p.Resource)
	}
	if d := cmp.Diff(scopes, []string{"kubepods.slice/memory", "node/cpu", "node/io", "node/memory"}); d != "" {
		t.Errorf("PSI order (-got +want):\n%s", d)
	}
	if s.PodsMemory == nil || s.PodsMemory.ActiveFile == nil || *s.PodsMemory.ActiveFile != 0 || *s.PodsMemory.InactiveFile != 256<<20 {
		t.Errorf("PodsMemory = %+v, want kubepods.slice's memory.stat (inactive_file 256Mi)", s.PodsMemory)
	}
	if p := s.Pods["66666666-7777-8888-9999-aaaaaaaaaaaa"]; p.Memory == nil || p.Memory.Dirty == nil || *p.Memory.Dirty != 100<<20/16 {
		t.Errorf("pod memory.stat = %+v, want file_dirty 100Mi/16", p.Memory)
	}
}

// TestNodeMemoryStatTakesMissingWorkingsetCountersFromVmstat: the v1 root memory.stat has no
// workingset_activate, so the node's comes from /proc/vmstat; its own refault counter is kept.
func TestNodeMemoryStatTakesMissingWorkingsetCountersFromVmstat(t *testing.T) {
	n := &source.Node{
		Proc:   procfs.NewReader("procfs/testdata/proc-k6.18.44"),
		Cgroup: &cgroupfs.Reader{Layout: layout(t, "cgroupfs/testdata/cgroupv1-cgroupfs")},
	}
	s, err := n.Snapshot(now)
	if err != nil {
		t.Fatalf("Snapshot: %v", err)
	}
	m := s.NodeMemory
	if m == nil || m.WorkingsetActivateFile == nil || *m.WorkingsetActivateFile != 272954 {
		t.Fatalf("NodeMemory = %+v, want workingset_activate_file 272954 from vmstat", m)
	}
	if *m.WorkingsetRefaultFile != 110870 || *m.ActiveFile != 2277781504 {
		t.Errorf("NodeMemory refaults %d, active_file %d; want the root memory.stat's 110870 and 2277781504",
			*m.WorkingsetRefaultFile, *m.ActiveFile)
	}
	if s.PodsMemory == nil || s.PodsMemory.WorkingsetActivateFile != nil {
		t.Errorf("PodsMemory = %+v, want read, without workingset_activate (v1 has none per cgroup)", s.PodsMemory)
	}
}

func TestSnapshotKeepsWhatItCouldRead(t *testing.T) {
	n := &source.Node{
		Proc:   procfs.NewReader("procfs/testdata/proc-k6.18.44"),
		Cgroup: &cgroupfs.Reader{Layout: layout(t, "cgroupfs/testdata/cgroupv2-cgroupfs")},
		Disk:   &statfs.Reader{NodefsPath: "/does/not/exist", Statfser: statfs.Unix{}},
	}
	s, err := n.Snapshot(now)
	if err == nil {
		t.Fatal("Snapshot with a missing nodefs path returned no error")
	}
	if _, ok := s.Observations[signal.NodeFsAvailable]; ok {
		t.Errorf("nodefs.available observed although statfs failed: %v", s.Observations[signal.NodeFsAvailable])
	}
	if _, ok := s.Observations[signal.AllocatableMemoryAvailable]; ok {
		t.Errorf("allocatableMemory.available observed although kubepods memory.max is \"max\"")
	}
	if _, ok := s.Observations[signal.MemoryAvailable]; !ok {
		t.Errorf("memory.available missing; the memory sources were readable (err: %v)", err)
	}
	t.Logf("joined error: %v", err)
}
