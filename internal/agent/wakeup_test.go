package agent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sys/unix"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kube-pressure/pressure/internal/notify"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// realPodsCgroup makes a real cgroup v1 memory cgroup with a kubepods child limited to 1Gi, removed
// after the test, and returns its directory.
func realPodsCgroup(t *testing.T) string {
	t.Helper()
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(t, "real cgroup v1 memory test cannot run: %s", why)
	}
	dir := filepath.Join(cgrouptest.V1Memory, cgrouptest.RandomName("pressure-agent-test"))
	if err := cgrouptest.Mkdir(filepath.Join(dir, "kubepods"), 1<<30); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cgrouptest.Remove(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}

// bindMount bind-mounts dir on a temporary directory (unmounted after the test) and returns it with a
// function that remounts it read-only or read-write.
func bindMount(t *testing.T, dir string) (string, func(readOnly bool)) {
	t.Helper()
	mnt := t.TempDir()
	if err := unix.Mount(dir, mnt, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind-mount %s on %s: %v", dir, mnt, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(mnt, unix.MNT_DETACH); err != nil { // detached: a notifier may still close its files
			t.Errorf("unmount %s: %v", mnt, err)
		}
	})
	return mnt, func(readOnly bool) {
		flags := uintptr(unix.MS_BIND | unix.MS_REMOUNT)
		if readOnly {
			flags |= unix.MS_RDONLY
		}
		if err := unix.Mount("", mnt, "", flags, ""); err != nil {
			t.Fatalf("remount %s (read-only %v): %v", mnt, readOnly, err)
		}
	}
}

type armedWakers struct {
	w    *wakers
	reg  *prometheus.Registry
	logs *bytes.Buffer
}

func startWakers(t *testing.T, memory, procRoot string, n Notifiers) (armedWakers, []notifierStatus) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m, err := NewMetrics(reg, "")
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	l := cgroupfs.Layout{Version: cgroupfs.V1, Memory: memory, Driver: cgroupfs.DriverCgroupfs, PodsCgroup: "kubepods"}
	w := newWakers(l, procRoot, testingclock.NewFakeClock(t0), slog.New(slog.NewTextHandler(&logs, nil)), func() {})
	w.armed = m.setArmed
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return armedWakers{w: w, reg: reg, logs: &logs}, w.start(ctx, n)
}

func (a armedWakers) armed(name string) float64 {
	return gaugeValue(a.reg, "pressure_agent_notifier_armed", "notifier", name)
}

func TestNotifiersArmOnTheRealV1MemcgAndProcPressure(t *testing.T) {
	dir := realPodsCgroup(t)
	a, st := startWakers(t, dir, "/proc", Notifiers{Memcg: true, PSI: true, PollInterval: 100 * time.Millisecond})
	for _, s := range st {
		if s.Err != nil {
			t.Errorf("%s not armed: %v", s, s.Err)
		}
	}
	if len(st) != 4 { // memcg root, memcg pods, psi, poll
		t.Errorf("statuses %v, want memcg twice, psi and poll", st)
	}
	for _, n := range []string{notifierMemcg, notifierPSI, notifierPoll} {
		if got := a.armed(n); got != 1 {
			t.Errorf("pressure_agent_notifier_armed{notifier=%q} %v, want 1", n, got)
		}
	}
	// The agent's threshold replaces the probe's on the real cgroup.
	a.w.rearm([]policy.Watch{{Signal: signal.AllocatableMemoryAvailable, Value: 100 << 20, Capacity: 1 << 30}})
	a.w.mu.Lock()
	got, ok := a.w.memcg[signal.AllocatableMemoryAvailable].n.Threshold()
	a.w.mu.Unlock()
	if want, _ := notify.UsageThreshold(1<<30, 100<<20, 0); !ok || got != want {
		t.Errorf("pods memcg threshold %d (armed %v), want %d", got, ok, want)
	}
}

// TestNotifierThatCannotArmIsNotListedAsStarted: on a read-only bind mount of a real memory cgroup (the
// chart's read-only /sys/fs/cgroup) the memcg notifier opens its files but cannot write
// cgroup.event_control; a /proc without pressure files has no PSI trigger. Both are reported not armed,
// with the reason, in the status and the metric; syncs after that warn nothing more.
func TestNotifierThatCannotArmIsNotListedAsStarted(t *testing.T) {
	dir := realPodsCgroup(t)
	ro, remount := bindMount(t, dir)
	remount(true)
	a, st := startWakers(t, ro, t.TempDir(), Notifiers{Memcg: true, PSI: true, PollInterval: 100 * time.Millisecond})
	byName := map[string][]notifierStatus{}
	for _, s := range st {
		byName[s.Name] = append(byName[s.Name], s)
	}
	for _, s := range byName[notifierMemcg] {
		if !errors.Is(s.Err, unix.EROFS) {
			t.Errorf("memcg on the read-only mount: %v, want EROFS", s)
		}
	}
	if len(byName[notifierMemcg]) != 2 {
		t.Errorf("memcg statuses %v, want the root and the pods cgroup", byName[notifierMemcg])
	}
	if ps := byName[notifierPSI]; len(ps) != 1 || ps[0].Err == nil || !strings.Contains(ps[0].Err.Error(), "pressure/memory") {
		t.Errorf("psi without /proc/pressure: %v, want an error naming the file", ps)
	}
	if ps := byName[notifierPoll]; len(ps) != 1 || ps[0].Err != nil {
		t.Errorf("poll: %v, want armed (it only reads)", ps)
	}
	for n, want := range map[string]float64{notifierMemcg: 0, notifierPSI: 0, notifierPoll: 1} {
		if got := a.armed(n); got != want {
			t.Errorf("pressure_agent_notifier_armed{notifier=%q} %v, want %v", n, got, want)
		}
	}
	for i := 0; i < 5; i++ {
		a.w.rearm([]policy.Watch{{Signal: signal.MemoryAvailable, Value: 100 << 20, Capacity: 8 << 30},
			{Signal: signal.AllocatableMemoryAvailable, Value: 100 << 20, Capacity: 1 << 30}})
	}
	if a.logs.Len() > 0 {
		t.Errorf("syncs after start logged:\n%s", a.logs)
	}
}

// TestMemcgThatStopsArmingWarnsOnceNotPerSync: the mount turns read-only after the start; every sync's
// re-arm then fails, which is one warning and the metric at 0, and one line when it arms again.
func TestMemcgThatStopsArmingWarnsOnceNotPerSync(t *testing.T) {
	dir := realPodsCgroup(t)
	mnt, remount := bindMount(t, dir)
	a, st := startWakers(t, mnt, "/proc", Notifiers{Memcg: true})
	for _, s := range st {
		if s.Err != nil {
			t.Fatalf("%s not armed on the read-write mount", s)
		}
	}
	watch := []policy.Watch{{Signal: signal.AllocatableMemoryAvailable, Value: 100 << 20, Capacity: 1 << 30}}
	remount(true)
	for i := 0; i < 5; i++ {
		a.w.rearm(watch)
	}
	if n := strings.Count(a.logs.String(), "memcg threshold no longer armed"); n != 1 {
		t.Errorf("%d warnings in 5 syncs, want 1:\n%s", n, a.logs)
	}
	if got := a.armed(notifierMemcg); got != 0 {
		t.Errorf("pressure_agent_notifier_armed{notifier=memcg} %v while it cannot be armed, want 0", got)
	}
	remount(false)
	a.w.rearm(watch)
	a.w.rearm(watch)
	if n := strings.Count(a.logs.String(), "memcg threshold armed again"); n != 1 {
		t.Errorf("%d 'armed again' lines, want 1:\n%s", n, a.logs)
	}
	if got := a.armed(notifierMemcg); got != 1 {
		t.Errorf("pressure_agent_notifier_armed{notifier=memcg} %v after re-arming, want 1", got)
	}
}

// v2Tree writes a cgroup v2 fixture: the root's memory.stat (anon bytes, no file cache) and a kubepods
// cgroup of 4Gi with podsUsage bytes.
func v2Tree(t *testing.T, dir string, anon, podsUsage int64) {
	t.Helper()
	writeAtomic(t, filepath.Join(dir, "memory.stat"), fmt.Sprintf("anon %d\nfile 0\ninactive_file 0\n", anon))
	pods := filepath.Join(dir, "kubepods")
	if err := os.MkdirAll(pods, 0o755); err != nil {
		t.Fatal(err)
	}
	writeAtomic(t, filepath.Join(pods, "memory.current"), fmt.Sprint(podsUsage))
	writeAtomic(t, filepath.Join(pods, "memory.max"), fmt.Sprint(4<<30))
	writeAtomic(t, filepath.Join(pods, "memory.stat"), "anon 0\nfile 0\ninactive_file 0\n")
}

// TestPollCoversTheNodeLevelSignalOnCgroupV2: on cgroup v2 there is no memcg notifier, so the fast poll
// is what wakes the agent between syncs. The node's memory.available falls below the agent's threshold
// (system daemons outside the pods cgroup grow) while the allocatable cgroup has room: the poll wakes
// the agent at its next tick, not the 10 s sync.
func TestPollCoversTheNodeLevelSignalOnCgroupV2(t *testing.T) {
	dir := t.TempDir()
	const memTotal = 24684092 << 10 // the procfs fixture's MemTotal
	v2Tree(t, dir, 20<<30, 1<<30)   // node: about 3.5Gi available; pods: 3Gi
	clk := testingclock.NewFakeClock(t0)
	l := cgroupfs.Layout{Version: cgroupfs.V2, Memory: dir, Driver: cgroupfs.DriverCgroupfs, PodsCgroup: "kubepods"}
	w := newWakers(l, "../source/procfs/testdata/proc-k6.18.44", clk, slog.New(slog.DiscardHandler), func() {})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st := w.start(ctx, Notifiers{PollInterval: 100 * time.Millisecond, PollDelta: 32 << 20})
	if len(st) != 1 || st[0].Err != nil || !strings.Contains(st[0].Where, "memory.available") {
		t.Fatalf("poll status %v, want armed on memory.available and allocatableMemory.available", st)
	}
	w.rearm([]policy.Watch{{Signal: signal.MemoryAvailable, Value: 1 << 30, Capacity: memTotal},
		{Signal: signal.AllocatableMemoryAvailable, Value: 356 << 20, Capacity: 4 << 30}})
	// tick steps the fake clock one poll and reports whether the agent woke within wait. A wake is
	// awaited up to 30 s (a bound against a hang, not a speed check: the poll reads a few files); its
	// absence is checked for 1 s, which a loaded host can only make pass, never fail.
	tick := func(wait time.Duration) bool {
		for !clk.HasWaiters() {
			time.Sleep(time.Millisecond)
		}
		clk.Step(100 * time.Millisecond)
		select {
		case <-w.ch:
			return true
		case <-time.After(wait):
			return false
		}
	}
	tick(30 * time.Second) // the first reading with the thresholds known
	if tick(time.Second) {
		t.Fatalf("woke without a change")
	}
	v2Tree(t, dir, memTotal-(512<<20), 1<<30) // node: 512Mi available, below 1Gi; pods unchanged
	if !tick(30 * time.Second) {
		t.Errorf("memory.available below its threshold did not wake the agent at the next poll")
	}
}
