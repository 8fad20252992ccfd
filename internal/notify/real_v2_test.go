package notify_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/notify"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

// The real cgroup v2 notifier tests run in the test/vm guest (cgrouptest.V2Root skips elsewhere). Each
// builds a child cgroup with a hog in it. Pressure comes from memory.high: with no swap the kernel cannot
// reclaim the hog's anonymous memory above it, so it throttles the hog (memory.events "high" counts it,
// and the penalty sleeps are memory stalls in the cgroup's memory.pressure).

// realV2Cgroup makes a child cgroup of the guest's root with memory.max = 1 GiB and a hog in it.
func realV2Cgroup(t *testing.T) (string, *cgrouptest.Hog) {
	t.Helper()
	dir := cgrouptest.NewV2Cgroup(t, cgrouptest.V2Root(t), "pressure-notify-test")
	if err := cgrouptest.WriteFile(filepath.Join(dir, "memory.max"), strconv.Itoa(1<<30)); err != nil {
		t.Fatal(err)
	}
	hog, err := cgrouptest.StartHog(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Close() })
	return dir, hog
}

func current(t *testing.T, dir string) uint64 {
	t.Helper()
	u, err := cgrouptest.ReadUint(filepath.Join(dir, "memory.current"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// squeeze sets memory.high 16 MiB above the current usage and lets the hog allocate 64 MiB in the
// background: it is throttled, not killed. The allocation is abandoned (the hog is killed at cleanup).
func squeeze(t *testing.T, dir string, hog *cgrouptest.Hog) {
	t.Helper()
	high := current(t, dir) + 16*mib
	if err := cgrouptest.WriteFile(filepath.Join(dir, "memory.high"), strconv.FormatUint(high, 10)); err != nil {
		t.Fatal(err)
	}
	go func() { _ = hog.Alloc(64 * mib) }()
}

// run starts r.Run on a fresh channel and stops it at cleanup, checking it returns nil.
func run(t *testing.T, r interface {
	Run(context.Context, chan<- struct{}) error
}) chan struct{} {
	t.Helper()
	ch := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, ch) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v after cancel, want nil", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("Run did not return within 5s of cancel")
		}
	})
	return ch
}

func TestPSITriggerWithASubSecondWindowFiresOnARealV2Cgroup(t *testing.T) {
	dir, hog := realV2Cgroup(t)
	tr, err := notify.ArmPSI(filepath.Join(dir, "memory.pressure"), "some", 50*time.Millisecond, 500*time.Millisecond)
	if err != nil {
		t.Fatalf("ArmPSI with a 500ms window as root: %v", err)
	}
	ch := run(t, tr)
	if err := hog.Alloc(32 * mib); err != nil {
		t.Fatal(err)
	}
	if waitSignal(ch, time.Second) {
		t.Fatal("PSI trigger fired while the cgroup allocated 32 MiB far below its limit (no stall)")
	}
	start := time.Now()
	squeeze(t, dir, hog)
	if !waitSignal(ch, signalWait) {
		t.Fatalf("PSI trigger %q did not fire within %s of memory.high throttling", tr.Spec, signalWait)
	}
	t.Logf("PSI trigger %q fired %s after memory.high was set", tr.Spec, time.Since(start).Round(time.Millisecond))
}

func TestFileWatchFiresWhenARealV2CgroupHitsMemoryHigh(t *testing.T) {
	dir, hog := realV2Cgroup(t)
	w, err := notify.WatchFile(filepath.Join(dir, "memory.events"))
	if err != nil {
		t.Fatal(err)
	}
	ch := run(t, w)
	if err := hog.Alloc(32 * mib); err != nil {
		t.Fatal(err)
	}
	if waitSignal(ch, 500*time.Millisecond) {
		t.Fatal("memory.events changed while the cgroup allocated far below its limits")
	}
	squeeze(t, dir, hog)
	if !waitSignal(ch, signalWait) {
		t.Fatalf("no inotify event on memory.events within %s of crossing memory.high", signalWait)
	}
	l := cgroupfs.Layout{Version: cgroupfs.V2, Memory: filepath.Dir(dir)}
	ev, err := l.MemoryEvents(filepath.Base(dir))
	if err != nil {
		t.Fatal(err)
	}
	if ev.High == nil || *ev.High == 0 {
		t.Errorf("memory.events high = %v after the signal, want > 0", ev.High)
	}
}

func TestPollerFiresOnARealV2Cgroup(t *testing.T) {
	dir, hog := realV2Cgroup(t)
	base := int64(current(t, dir))
	// available = 1 GiB − memory.current; signal when less than 1 GiB − base − 64 MiB remains.
	p := &notify.Poller{Threshold: 1<<30 - base - 64*mib, Interval: 20 * time.Millisecond,
		Read: func() (int64, error) {
			u, err := cgrouptest.ReadUint(filepath.Join(dir, "memory.current"))
			return 1<<30 - int64(u), err
		}}
	ch := run(t, p)
	if waitSignal(ch, 300*time.Millisecond) {
		t.Fatal("poller signalled before the hog allocated")
	}
	if err := hog.Alloc(96 * mib); err != nil {
		t.Fatal(err)
	}
	if !waitSignal(ch, signalWait) {
		t.Errorf("poller did not signal within %s after memory.current grew by 96 MiB across +64 MiB (now %d)", signalWait, current(t, dir))
	}
}
