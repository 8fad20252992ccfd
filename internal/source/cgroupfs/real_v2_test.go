package cgroupfs_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// v2Pod builds <root>/<test>/kubepods (memory.max = limit)/burstable/pod<uid> on the guest's cgroup2
// hierarchy and returns the layout (driver cgroupfs, pods cgroup <test>/kubepods) and the pod dir.
func v2Pod(t *testing.T, uid string, limit int64) (cgroupfs.Layout, string) {
	t.Helper()
	root := cgrouptest.V2Root(t)
	top := cgrouptest.NewV2Cgroup(t, root, "pressure-test")
	if err := cgrouptest.MkdirV2(top, "kubepods", limit); err != nil {
		t.Fatal(err)
	}
	pod := filepath.Join("kubepods", "burstable", "pod"+uid)
	if err := cgrouptest.MkdirV2(top, pod, 0); err != nil {
		t.Fatal(err)
	}
	l, err := cgroupfs.Detector{Root: root}.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if l.Version != cgroupfs.V2 || !l.UnifiedHasMemory || l.Memory != root {
		t.Fatalf("Detect(%s) = %v, want cgroup v2 with the memory controller at the root", root, l)
	}
	l.Driver, l.PodsCgroup = cgroupfs.DriverCgroupfs, filepath.Join(filepath.Base(top), "kubepods")
	return l, filepath.Join(top, pod)
}

// TestRealV2PodWorkingSet is TestRealV1PodWorkingSet on a real cgroup v2 memory controller: the pod's
// memory.current/memory.stat, the pods cgroup's memory.max, the root's memory.stat (no memory.current
// there), cgroup.procs/cgroup.threads and the pods cgroup's PSI files.
func TestRealV2PodWorkingSet(t *testing.T) {
	const uid = "0a0b0c0d-1111-2222-3333-444455556666"
	const limit = 512 * mib
	const alloc = 64 * mib
	l, podDir := v2Pod(t, uid, limit)
	hog, err := cgrouptest.StartHog(podDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Close() })
	if err := hog.Alloc(alloc); err != nil {
		t.Fatal(err)
	}
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
	if ws < alloc || ws > alloc+16*mib {
		t.Errorf("pod working set = %d MiB, want within [64, 80] MiB", ws/mib)
	}
	if *p.ProcessCount != 1 || p.ThreadCount == nil || *p.ThreadCount <= 1 {
		t.Errorf("pod processes = %d, threads = %v; want 1 (the hog) and more than 1 (cgroup.threads of a Go program)", *p.ProcessCount, p.ThreadCount)
	}
	if pids, err := l.PIDs(l.PodsCgroup); err != nil || !slices.Equal(pids, []int{hog.Pid}) {
		t.Errorf("PIDs(pods cgroup) = %v, %v; want [%d]", pids, err, hog.Pid)
	}

	a, err := r.AllocatableMemory(now)
	if err != nil {
		t.Fatalf("AllocatableMemory: %v", err)
	}
	if a.Capacity != limit || a.Available > limit-alloc || a.Available < limit-alloc-16*mib {
		t.Errorf("allocatableMemory = %v, want capacity 512 MiB (memory.max) and available ≈ 448 MiB", a)
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
		t.Errorf("memory.available = %v, want capacity MemTotal and 0 < available < MemTotal − 64 MiB (root anon+file holds the hog)", n)
	}
	checkPodsPressure(t, r, now)
	t.Logf("pod ws=%d MiB procs=%d threads=%d; allocatable=%d MiB of %d MiB; node available=%d MiB of %d MiB",
		ws/mib, *p.ProcessCount, *p.ThreadCount, a.Available/mib, a.Capacity/mib, n.Available/mib, n.Capacity/mib)
}

// checkPodsPressure wants the pods cgroup's memory, io and cpu PSI, each with its "some" line.
func checkPodsPressure(t *testing.T, r *cgroupfs.Reader, now time.Time) {
	t.Helper()
	ps, err := r.Pressure(now)
	if err != nil {
		t.Fatalf("Pressure: %v", err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Resource)
		if p.Scope != r.Layout.PodsCgroup || !p.Time.Equal(now) {
			t.Errorf("pressure %s: scope %q at %v, want %q at %v", p.Resource, p.Scope, p.Time, r.Layout.PodsCgroup, now)
		}
	}
	for _, want := range []string{"memory", "io", "cpu"} {
		if !slices.Contains(got, want) {
			t.Errorf("Pressure() resources = %v, want %s among them (the pods cgroup's %s.pressure)", got, want, want)
		}
	}
}

// TestRealV2MemoryEventsCountTheOOMKill drives a pod past its memory.max: the kernel OOM-kills the hog
// and memory.events counts max, oom and oom_kill.
func TestRealV2MemoryEventsCountTheOOMKill(t *testing.T) {
	const uid = "0a0b0c0d-1111-2222-3333-777777777777"
	l, podDir := v2Pod(t, uid, 512*mib)
	pod, err := filepath.Rel(l.Memory, podDir)
	if err != nil {
		t.Fatal(err)
	}
	before, err := l.MemoryEvents(pod)
	if err != nil {
		t.Fatalf("MemoryEvents before: %v", err)
	}
	if before.Max == nil || *before.Max != 0 || before.OOMKill == nil || *before.OOMKill != 0 {
		t.Fatalf("memory.events of a fresh cgroup = %+v, want max 0 and oom_kill 0 present", before)
	}
	if err := cgrouptest.WriteFile(filepath.Join(podDir, "memory.max"), "33554432"); err != nil {
		t.Fatal(err)
	}
	hog, err := cgrouptest.StartHog(podDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Close() })
	if err := hog.Alloc(64 * mib); err == nil {
		t.Fatal("the hog allocated 64 MiB in a cgroup with memory.max 32 MiB and no swap; want it OOM-killed")
	}
	ev, err := l.MemoryEvents(pod)
	if err != nil {
		t.Fatalf("MemoryEvents after: %v", err)
	}
	for name, v := range map[string]*uint64{"max": ev.Max, "oom": ev.OOM, "oom_kill": ev.OOMKill} {
		if v == nil || *v == 0 {
			t.Errorf("memory.events %s = %v after the OOM kill, want > 0", name, v)
		}
	}
	if _, err := l.MemoryEvents(filepath.Join(pod, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("MemoryEvents of a missing cgroup: %v, want fs.ErrNotExist", err)
	}
}
