package notify_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/notify"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/testenv"
)

func TestUsageThresholdIsTheKubeletFormula(t *testing.T) {
	for _, tc := range []struct {
		name                        string
		capacity, threshold, inactv uint64
		want                        uint64
		ok                          bool
	}{
		{"capacity minus threshold plus inactive_file", 8 << 30, 100 << 20, 1 << 30, 8<<30 - 100<<20 + 1<<30, true},
		{"no inactive file is capacity minus threshold", 1000, 100, 0, 900, true},
		{"threshold equal to capacity cannot be expressed", 1000, 1000, 5, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := notify.UsageThreshold(tc.capacity, tc.threshold, tc.inactv)
			if got != tc.want || ok != tc.ok {
				t.Errorf("UsageThreshold(%d, %d, %d) = %d, %t; want %d, %t", tc.capacity, tc.threshold, tc.inactv, got, ok, tc.want, tc.ok)
			}
		})
	}
}

// realCgroup makes a v1 memory cgroup with a hog in it and removes both after the test.
func realCgroup(t *testing.T, limit int64) (string, *cgrouptest.Hog) {
	t.Helper()
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(t, "real cgroup v1 test cannot run: %s", why)
	}
	dir := filepath.Join(cgrouptest.V1Memory, cgrouptest.RandomName("pressure-test"))
	if err := cgrouptest.Mkdir(dir, limit); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cgrouptest.Remove(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	hog, err := cgrouptest.StartHog(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Close() })
	return dir, hog
}

func usage(t *testing.T, dir string) uint64 {
	t.Helper()
	u, err := cgrouptest.ReadUint(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func startMemcg(t *testing.T, dir string, threshold uint64) (*notify.MemcgThreshold, chan struct{}) {
	t.Helper()
	n, err := notify.NewMemcgThreshold(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := n.SetThreshold(threshold); err != nil {
		n.Close()
		t.Fatal(err)
	}
	ch := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx, ch) }()
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
	return n, ch
}

func TestMemcgThresholdFiresOnUpwardAndDownwardCrossing(t *testing.T) {
	dir, hog := realCgroup(t, 1<<30)
	base := usage(t, dir)
	_, ch := startMemcg(t, dir, base+32*mib)
	if waitSignal(ch, 300*time.Millisecond) {
		t.Fatalf("signal before any crossing (usage %d, threshold %d)", usage(t, dir), base+32*mib)
	}
	if err := hog.Alloc(64 * mib); err != nil {
		t.Fatal(err)
	}
	if !waitSignal(ch, signalWait) {
		t.Fatalf("no signal within %s after usage grew from %d to %d across %d", signalWait, base, usage(t, dir), base+32*mib)
	}
	drain(ch)
	if err := hog.Free(); err != nil {
		t.Fatal(err)
	}
	if !waitSignal(ch, signalWait) {
		t.Fatalf("no signal within %s after usage fell to %d below %d", signalWait, usage(t, dir), base+32*mib)
	}
}

func TestMemcgSetThresholdReplacesTheOldOne(t *testing.T) {
	dir, hog := realCgroup(t, 1<<30)
	base := usage(t, dir)
	n, ch := startMemcg(t, dir, base+16*mib)
	if err := n.SetThreshold(base + 200*mib); err != nil {
		t.Fatal(err)
	}
	if got, ok := n.Threshold(); !ok || got != base+200*mib {
		t.Errorf("Threshold() = %d, %t; want %d, true", got, ok, base+200*mib)
	}
	if err := hog.Alloc(64 * mib); err != nil {
		t.Fatal(err)
	}
	if waitSignal(ch, 500*time.Millisecond) {
		t.Fatalf("signal when crossing only the replaced threshold %d (usage %d)", base+16*mib, usage(t, dir))
	}
	if err := hog.Alloc(160 * mib); err != nil {
		t.Fatal(err)
	}
	if !waitSignal(ch, signalWait) {
		t.Fatalf("no signal after crossing the new threshold %d (usage %d)", base+200*mib, usage(t, dir))
	}
}

func TestMemcgOnMissingCgroupFails(t *testing.T) {
	if _, err := notify.NewMemcgThreshold(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("NewMemcgThreshold on a missing cgroup succeeded")
	}
}
