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
