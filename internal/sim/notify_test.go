package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// critical is a pod the kubelet never evicts.
func critical(name string, usage Ramp) ModelPod {
	p := pod(name, 0, 0, usage)
	p.Candidate.Critical = true
	return p
}

// downUpDown is a base growing 10Mi/s from base, a critical pod that frees 50Mi at drop, one that takes
// 150Mi from drop+300ms (1000Mi/s), and the pods a (60Mi), b (30Mi) and c (20Mi).
func downUpDown(base int64, drop time.Duration) Model {
	return model(critical("base", Ramp{Start: base, Rate: 10 * mi}),
		critical("dropper", Ramp{Start: 50 * mi, Rate: -1000 * mi, After: drop}),
		critical("filler", Ramp{Rate: 1000 * mi, Until: 150 * mi, After: drop + 300*time.Millisecond}),
		pod("a", 0, 0, Ramp{Start: 60 * mi}), pod("b", 0, 0, Ramp{Start: 30 * mi}), pod("c", 0, 0, Ramp{Start: 20 * mi}))
}

// The pods cgroup crosses 1848Mi at 23.9 s (a base growing 10Mi/s; every pod has stats by then): the
// notifier's sync evicts a, whose kill takes a second. During it available crosses back up (a critical
// pod frees 50Mi at 24.2 s) and down again (another takes 150Mi from 24.5 s): the handler is busy, both
// events wait. At 24.9 s the kill is done and the first waiting event makes a sync at once: still
// below, it evicts b; after b's kill the second makes another, which evicts c. Without them the loop's
// next sync (30.3 s) would have been the next trigger.
func TestEventsDuringANotifiedKillWaitAndEachMakesASyncAfterIt(t *testing.T) {
	m := downUpDown(1450*mi, 24200*time.Millisecond)
	timing := DefaultTiming()
	timing.FirstSync, timing.PodKill = 300*time.Millisecond, time.Second
	res := simulate(t, m, Options{Kubelet: hard200(t), Timing: timing}, 1)
	want := []evicted{{"default/a", 23900 * time.Millisecond, ActorKubelet}, {"default/b", 24900 * time.Millisecond, ActorKubelet},
		{"default/c", 25900 * time.Millisecond, ActorKubelet}}
	if diff := cmp.Diff(want, evictions(res, RunKubelet), cmp.AllowUnexported(evicted{})); diff != "" {
		t.Errorf("evictions (-want +got):\n%s", diff)
	}
	var waited int
	for _, e := range events(res, RunKubelet, KindNotify) {
		if strings.Contains(e.Detail, "waited") {
			waited++
		}
	}
	if waited != 2 {
		t.Errorf("%d notifications say their event waited for the kill, want 2 (24.9s, 25.9s)", waited)
	}
	if again := events(res, RunKubelet, KindEvictAgain); len(again) != 0 {
		t.Errorf("a sync evicted a pod under its kill again (%+v): the crossings during the kill synced at once", again)
	}
}

// Four crossings during a's kill (22.9-23.9 s: up at 23.3, down at 23.5, up at 23.7, down at 23.8) leave
// two events waiting, not four: after a's kill one sync evicts b and, after b's, one evicts c; d, still
// below the threshold, waits for the loop's sync at 30.3 s.
func TestAtMostTwoEventsWaitForABusyHandler(t *testing.T) {
	m := model(critical("base", Ramp{Start: 1300 * mi, Rate: 10 * mi}),
		critical("dropper", Ramp{Start: 50 * mi, Rate: -1000 * mi, After: 23200 * time.Millisecond}),
		critical("filler", Ramp{Rate: 1000 * mi, Until: 150 * mi, After: 23400 * time.Millisecond}),
		critical("dropper2", Ramp{Start: 150 * mi, Rate: -2000 * mi, After: 23600 * time.Millisecond}),
		critical("filler2", Ramp{Rate: 1000 * mi, Until: 250 * mi, After: 23700 * time.Millisecond}),
		pod("a", 0, 0, Ramp{Start: 60 * mi}), pod("b", 0, 0, Ramp{Start: 30 * mi}), pod("c", 0, 0, Ramp{Start: 20 * mi}),
		pod("d", 0, 0, Ramp{Start: 10 * mi}))
	timing := DefaultTiming()
	timing.FirstSync, timing.PodKill = 300*time.Millisecond, time.Second
	res := simulate(t, m, Options{Kubelet: hard200(t), Timing: timing}, 1)
	got := evictions(res, RunKubelet)
	if len(got) != 4 {
		t.Fatalf("evictions %v, want a, b, c and then d", got)
	}
	want := []evicted{{"default/a", 22900 * time.Millisecond, ActorKubelet}, {"default/b", 23900 * time.Millisecond, ActorKubelet},
		{"default/c", 24900 * time.Millisecond, ActorKubelet}}
	if diff := cmp.Diff(want, got[:3], cmp.AllowUnexported(evicted{})); diff != "" {
		t.Errorf("evictions (-want +got):\n%s", diff)
	}
	if got[3].pod != "default/d" || got[3].at < 30*time.Second {
		t.Errorf("d evicted %v, want at the loop's sync (30.3 s or later), not after c's kill", got[3])
	}
}

// The pods cgroup crosses 1848Mi at 10.3 s, the instant of the loop's sync (FirstSync 0.3 s, no sync
// duration): the loop evicts a, and the notifier's sync beside it waits for the same kill (until
// 11.3 s). The crossings during that kill (up at 10.6 s, down at 10.9 s) wait for it: at 11.3 s a sync
// evicts b, a second before the loop, back from its cleanup wait, evicts c at 12.3 s.
func TestANotificationAtTheLoopsSyncWaitsForTheLoopsKill(t *testing.T) {
	m := downUpDown(1586*mi, 10500*time.Millisecond)
	timing := DefaultTiming()
	timing.FirstSync, timing.SyncDuration, timing.PodKill = 300*time.Millisecond, 0, time.Second
	res := simulate(t, m, Options{Kubelet: hard200(t), Timing: timing}, 1)
	want := []evicted{{"default/a", 10300 * time.Millisecond, ActorKubelet}, {"default/b", 11300 * time.Millisecond, ActorKubelet},
		{"default/c", 12300 * time.Millisecond, ActorKubelet}}
	if diff := cmp.Diff(want, evictions(res, RunKubelet), cmp.AllowUnexported(evicted{})); diff != "" {
		t.Errorf("evictions (-want +got):\n%s", diff)
	}
}
