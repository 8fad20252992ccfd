package cgroupfs_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// TestRealV1PodWorkingSet builds a real kubepods/burstable/pod<uid> tree in the host's cgroup v1 memory
// controller, runs a process in it that touches 64 MiB, and checks the observations against it.
func TestRealV1PodWorkingSet(t *testing.T) {
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(t, "real cgroup v1 test cannot run: %s", why)
	}
	const uid = "0a0b0c0d-1111-2222-3333-444455556666"
	const limit = 512 * mib
	const alloc = 64 * mib
	top, _ := cgrouptest.V1PodHog(t, uid, limit, alloc)

	l, err := cgroupfs.Detector{}.Detect()
	if err != nil {
		t.Fatal(err)
	}
	l.Driver, l.PodsCgroup = cgroupfs.DriverCgroupfs, filepath.Join(filepath.Base(top), "kubepods")
	r := &cgroupfs.Reader{Layout: l}
	now := time.Now()

	pods, err := r.Pods(now)
	if err != nil {
		t.Fatalf("Pods: %v", err)
	}
	p, ok := pods[uid]
	if !ok {
		t.Fatalf("Pods() = %v, want an entry for %s", pods, uid)
	}
	ws := int64(*p.MemoryWorkingSet)
	// The hog touched 64 MiB after joining the cgroup; its Go runtime adds a little after the move, and
	// more under -race (the hog is this test binary, race detector included: 81 MiB seen in make test).
	const runtimeSlack = 32 * mib
	if ws < alloc || ws > alloc+runtimeSlack {
		t.Errorf("pod working set = %d MiB, want within [64, 96] MiB", ws/mib)
	}
	if *p.ProcessCount != 1 {
		t.Errorf("pod process count = %d, want 1 (the hog)", *p.ProcessCount)
	}
	if p.ThreadCount == nil || *p.ThreadCount <= *p.ProcessCount {
		t.Errorf("pod thread count = %v, want more than its one process (the Go runtime starts several threads)", p.ThreadCount)
	}

	a, err := r.AllocatableMemory(now)
	if err != nil {
		t.Fatalf("AllocatableMemory: %v", err)
	}
	if a.Capacity != limit || a.Available > limit-alloc || a.Available < limit-alloc-runtimeSlack {
		t.Errorf("allocatableMemory = %v, want capacity 512 MiB and available in [416, 448] MiB", a)
	}

	total, err := procfs.NewReader("").MemTotal()
	if err != nil {
		t.Fatal(err)
	}
	n, err := r.NodeMemory(now, total)
	if err != nil {
		t.Fatalf("NodeMemory: %v", err)
	}
	if n.Capacity != int64(total) || n.Available <= 0 || n.Available >= int64(total)-alloc {
		t.Errorf("memory.available = %v, want capacity MemTotal and 0 < available < MemTotal − 64 MiB", n)
	}
	t.Logf("pod ws=%d MiB procs=%d threads=%d; allocatable=%d MiB of %d MiB; node available=%d MiB of %d MiB",
		ws/mib, *p.ProcessCount, *p.ThreadCount, a.Available/mib, a.Capacity/mib, n.Available/mib, n.Capacity/mib)
}
