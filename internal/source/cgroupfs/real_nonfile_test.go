package cgroupfs_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// TestRealV1PodUsageOtherThanFilePagesByMemoryStatHoldsStillWhileItsPagesAreReclaimedAndReadBack runs a
// shell that reads a 256 MiB file in a loop in a real pod cgroup (kubepods/burstable/pod<uid>/ctr, the
// host's cgroup v1 memory controller), squeezes the pod's limit three times (what the reclaim rung does
// on v1) while the shell reads the pages back, and samples Reader.Pods every few milliseconds. The usage
// other than file pages by memory.stat alone (total_rss + total_shmem, MemoryStat.NonFile) must hold
// still: the shell allocates nothing. The same figure from two reads (usage − active − inactive) is
// logged: on this host it moved by 100 MiB within one sample (the usage file ahead of memory.stat),
// which the policy read as growth before it took the one-read figure.
func TestRealV1PodUsageOtherThanFilePagesByMemoryStatHoldsStillWhileItsPagesAreReclaimedAndReadBack(t *testing.T) {
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(t, "real cgroup v1 test cannot run: %s", why)
	}
	const uid = "1a1b1c1d-2222-3333-4444-555566667777"
	top := filepath.Join(cgrouptest.V1Memory, cgrouptest.RandomName("pressure-test"))
	pod := filepath.Join(top, "kubepods", "burstable", "pod"+uid)
	if err := cgrouptest.Mkdir(filepath.Join(top, "kubepods"), 1024*mib); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cgrouptest.Remove(top); err != nil {
			t.Errorf("remove %s: %v", top, err)
		}
	})
	if err := cgrouptest.Mkdir(filepath.Join(pod, "ctr"), 0); err != nil {
		t.Fatal(err)
	}
	file := cgrouptest.CacheFile(t, 256*mib)
	sh := exec.Command("sh", "-c", fmt.Sprintf(`echo $$ > %s/cgroup.procs && while :; do cat %s > /dev/null; done`,
		filepath.Join(pod, "ctr"), file))
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = unix.Kill(-sh.Process.Pid, unix.SIGKILL); _ = sh.Wait() }) // the shell and its cat

	l, err := cgroupfs.Detector{}.Detect()
	if err != nil {
		t.Fatal(err)
	}
	l.Driver, l.PodsCgroup = cgroupfs.DriverCgroupfs, filepath.Join(filepath.Base(top), "kubepods")
	r := &cgroupfs.Reader{Layout: l}
	// The whole file cached in the pod: it reads it back from the cache from then on.
	usage := readingPodUsage(t, filepath.Join(pod, "memory.usage_in_bytes"), 240*mib, 30*time.Second)
	checkNonFileHoldsStill(t, r, uid, usage, 200*mib, func() error { return squeeze(pod, usage, 3, 96*mib, 300*time.Millisecond) })
}

// checkNonFileHoldsStill samples r.Pods every few milliseconds for 1.5 s while reclaim runs, and wants
// the pod's anon + shmem (memory.stat alone) to move by at most 4 MiB and the reclaim to have taken its
// usage below below. It logs the two-read figure (usage − file pages) beside it.
func checkNonFileHoldsStill(t *testing.T, r *cgroupfs.Reader, uid string, usage func() int64, below int64, reclaim func() error) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- reclaim() }()
	var stat, twoReads []int64
	lowest := usage()
	for end := time.Now().Add(1500 * time.Millisecond); time.Now().Before(end); time.Sleep(3 * time.Millisecond) {
		lowest = min(lowest, usage())
		pods, err := r.Pods(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		p, ok := pods[uid]
		if !ok || p.Memory == nil || p.MemoryWorkingSet == nil || p.Memory.ActiveFile == nil {
			t.Fatalf("Pods()[%s] = %+v, want its working set and memory.stat", uid, p)
		}
		nf, ok := p.Memory.NonFile()
		if !ok {
			t.Fatalf("the pod's memory.stat has no anon or shmem: %+v", *p.Memory)
		}
		stat = append(stat, int64(nf))
		twoReads = append(twoReads, int64(*p.MemoryWorkingSet)-int64(*p.Memory.ActiveFile))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	sLo, sHi := span(stat)
	tLo, tHi := span(twoReads)
	t.Logf("%d samples; lowest usage %d MiB; anon + shmem %.1f..%.1f MiB; usage − file pages %.1f..%.1f MiB",
		len(stat), lowest/mib, float64(sLo)/mib, float64(sHi)/mib, float64(tLo)/mib, float64(tHi)/mib)
	if lowest >= below {
		t.Errorf("the lowest usage seen was %d MiB: the reclaims did not take the pod's pages (want below %d MiB)", lowest/mib, below/mib)
	}
	if sHi-sLo > 4*mib {
		t.Errorf("anon + shmem moved by %.1f MiB while the pod only read its file: want at most 4 MiB",
			float64(sHi-sLo)/mib)
	}
}

// readingPodUsage waits until the usage file reads at least atLeast (the reader's file cached in its
// cgroup), within the timeout, and returns a reader of it.
func readingPodUsage(t *testing.T, file string, atLeast int64, timeout time.Duration) func() int64 {
	t.Helper()
	usage := func() int64 {
		u, err := cgrouptest.ReadUint(file)
		if err != nil {
			t.Fatal(err)
		}
		return int64(u)
	}
	for deadline := time.Now().Add(timeout); usage() < atLeast; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s is %d MiB after %s of reading the file, want at least %d MiB", file, usage()/mib, timeout, atLeast/mib)
		}
	}
	return usage
}

// squeeze lowers the pod's memory.limit_in_bytes to its usage less by, and lifts it again, n times, every
// pause: the kernel reclaims that much of its file pages while the reader reads them back.
func squeeze(pod string, usage func() int64, n int, by int64, pause time.Duration) error {
	limit := filepath.Join(pod, "memory.limit_in_bytes")
	for range n {
		time.Sleep(pause)
		if err := cgrouptest.WriteFile(limit, strconv.FormatInt(usage()-by, 10)); err != nil {
			return err
		}
		if err := cgrouptest.WriteFile(limit, "-1"); err != nil {
			return err
		}
	}
	return nil
}

// span returns the lowest and the highest of xs.
func span(xs []int64) (lo, hi int64) {
	lo, hi = xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}
