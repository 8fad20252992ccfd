package source_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/source/sourcetest"
	"github.com/kube-pressure/pressure/internal/testenv"
)

func TestMain(m *testing.M) {
	cgrouptest.RunHogIfRequested()
	os.Exit(m.Run())
}

// TestAPodFreeingItsMemoryDuringTheReadIsNotSeenFreeWhileTheSignalStillCountsIt runs a hog holding
// 256 MiB in a pod cgroup of this host's cgroup v1 memory controller and frees it between the two reads
// of one snapshot. The snapshot must not show the pod's memory gone while allocatableMemory.available
// still counts it as used: the policy credits an in-flight pod's memory against the signal, and that torn
// read evicts the next pod for memory already back (soak seed 20261205, episode 63). Read pods first, the
// pod still shows its 256 MiB and the signal has them back: counted twice for one read, which costs an
// eviction one sync late, not a wrong one.
func TestAPodFreeingItsMemoryDuringTheReadIsNotSeenFreeWhileTheSignalStillCountsIt(t *testing.T) {
	const mib = 1 << 20
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(t, "real cgroup v1 test cannot run: %s", why)
	}
	const uid = "5e1f0a0b-1111-2222-3333-444455556666"
	top, _, hog := cgrouptest.V1Pod(t, uid, 1024*mib, 256*mib)
	l, err := cgroupfs.Detector{}.Detect()
	if err != nil {
		t.Fatal(err)
	}
	l.Driver, l.PodsCgroup = cgroupfs.DriverCgroupfs, filepath.Join(filepath.Base(top), "kubepods")
	node := &source.Node{Proc: procfs.NewReader(procfs.DefaultRoot), Cgroup: &cgroupfs.Reader{Layout: l}}
	free := func() {
		if err := hog.Free(); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := source.ReadPodsFirst(&sourcetest.AfterFirstRead{NodeReader: node, Change: free}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	pod, ok := snap.Pods[uid]
	if !ok || pod.MemoryWorkingSet == nil {
		t.Fatalf("pods read %v, want %s with a working set", snap.Pods, uid)
	}
	alloc, ok := snap.Observations[signal.AllocatableMemoryAvailable]
	if !ok {
		t.Fatalf("observations %v, want allocatableMemory.available", snap.Observations)
	}
	podWS, used := int64(*pod.MemoryWorkingSet), alloc.Capacity-alloc.Available
	t.Logf("pod working set %d MiB, pods cgroup in use %d MiB", podWS/mib, used/mib)
	if podWS < 200*mib && used >= 200*mib {
		t.Fatalf("torn read: the pod shows %d MiB while the pods cgroup still holds %d MiB", podWS/mib, used/mib)
	}
	if podWS < 256*mib || used >= 200*mib {
		t.Errorf("pod %d MiB, pods cgroup %d MiB: want the pod read before its memory was freed (256 MiB) and the signal after (under 200 MiB)",
			podWS/mib, used/mib)
	}
}
