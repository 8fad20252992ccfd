package sim

import (
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// The pods cgroup of model() holds 2Gi; 200Mi thresholds fire when the pods use more than 1848Mi.

func TestKubeletEvictsAtTheFirstHousekeepingSyncAfterTheCrossingWithoutNotifier(t *testing.T) {
	// 1800Mi + 1Mi/s crosses 1848Mi at 48 s; syncs at 0, 10, ... 50 s.
	m := model(pod("leak", 0, 0, Ramp{Start: 1800 * mi, Rate: mi}))
	res := simulate(t, m, Options{Kubelet: noNotifier(hard200(t))}, 1)
	got := evictions(res, RunKubelet)
	want := []evicted{{"default/leak", 50 * time.Second, ActorKubelet}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(evicted{})); diff != "" {
		t.Errorf("evictions (-want +got):\n%s", diff)
	}
}

func TestMemcgNotifierSyncsAtTheCrossing(t *testing.T) {
	m := model(pod("leak", 0, 0, Ramp{Start: 1800 * mi, Rate: mi}))
	res := simulate(t, m, Options{Kubelet: hard200(t)}, 1)
	got := evictions(res, RunKubelet)
	if len(got) != 1 || got[0].at != 48100*time.Millisecond {
		t.Errorf("evictions %v, want default/leak at the first tick below the threshold, 48.1s", got)
	}
	if n := events(res, RunKubelet, KindNotify); len(n) == 0 || time.Duration(n[0].Offset) != 48100*time.Millisecond {
		t.Errorf("notify events %v, want one at 48.1s", n)
	}
}

func TestAfterAnEvictionTheKubeletWaitsForCleanupThenSyncsAtOnce(t *testing.T) {
	// A critical pod keeps the pods above the threshold after a's eviction: b goes right after a's
	// cleanup, not a housekeeping interval later. The kill ends at 0.5s, the wait checks every second
	// from then (1.5s, 2.5s, 3.5s), the resources are reclaimed 2.5s after the kill (3s): b at 3.5s.
	crit := pod("crit", 0, 0, Ramp{Start: 1800 * mi})
	crit.Candidate.Critical = true
	m := model(pod("a", 0, 0, Ramp{Start: 100 * mi}), pod("b", 0, 0, Ramp{Start: 90 * mi}), crit)
	timing := DefaultTiming()
	timing.PodKill, timing.PodCleanup = 500*time.Millisecond, 2500*time.Millisecond
	res := simulate(t, m, Options{Kubelet: noNotifier(hard200(t)), Timing: timing}, 1)
	got := evictions(res, RunKubelet)
	want := []evicted{{"default/a", 0, ActorKubelet}, {"default/b", 3500 * time.Millisecond, ActorKubelet}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(evicted{})); diff != "" {
		t.Errorf("evictions (-want +got):\n%s", diff)
	}
}

func TestThePodWithoutStatsYetIsEvictedFirst(t *testing.T) {
	// "new" starts at 48 s, small: cAdvisor measures it first up to 10 s later, so at the crossing
	// (48.1 s) the kubelet has no stats for it (for 99 % of the seeds; seed 1 is one) and ranks it
	// before every pod with stats.
	m := model(pod("old", 0, 0, Ramp{Start: 1790 * mi, Rate: mi}), ModelPod{Candidate: pod("new", 0, 0, Ramp{}).Candidate,
		Start: 48 * time.Second, Usage: Ramp{Start: 10 * mi}})
	res := simulate(t, m, Options{Kubelet: hard200(t)}, 1)
	got := evictions(res, RunKubelet)
	if len(got) == 0 || got[0].pod != "default/new" {
		t.Fatalf("evictions %v, want default/new first (no stats)", got)
	}
	if d := events(res, RunKubelet, KindEvict)[0].Detail; !strings.Contains(d, "no stats") {
		t.Errorf("detail %q does not say no stats", d)
	}
}

// staleWorld serves every pod's cached stats age old.
type staleWorld struct {
	World
	age time.Duration
}

func (w staleWorld) Cached(uid string, t time.Time) (signal.PodStats, bool) {
	return w.Usage(uid, t.Add(-w.age))
}

func TestTheKubeletRanksByItsCachedStats(t *testing.T) {
	// "fast" grows past "steady" in the 8 s before the crossing (48.1 s): with stats 15 s old the
	// kubelet still sees "steady" as the larger and evicts it; with fresh stats it evicts "fast".
	fast := pod("fast", 0, 0, Ramp{Start: 500 * mi, Rate: 80 * mi, After: 40 * time.Second})
	steady := pod("steady", 0, 0, Ramp{Start: 700 * mi})
	for _, tc := range []struct {
		name string
		age  time.Duration
		want string
	}{{"stats 15s old", 15 * time.Second, "default/steady"}, {"fresh stats", 0, "default/fast"}} {
		t.Run(tc.name, func(t *testing.T) {
			w := staleWorld{World: model(fast, steady).World(rand.New(rand.NewSource(1))), age: tc.age}
			res := Simulate(w, Options{Kubelet: hard200(t), Timing: DefaultTiming()})
			if got := evictions(res, RunKubelet); len(got) == 0 || got[0].pod != tc.want {
				t.Errorf("evictions %v, want %s first", got, tc.want)
			}
		})
	}
}

func TestCAdvisorMeasuresEachPodEvery10To20Seconds(t *testing.T) {
	m := model(pod("a", 0, 0, Ramp{Start: mi, Rate: mi}))
	times := func(seed int64) []time.Duration {
		w := m.World(rand.New(rand.NewSource(seed)))
		var out []time.Duration
		for at := t0; at.Before(t0.Add(m.Duration)); at = at.Add(100 * time.Millisecond) {
			s, ok := w.Cached("uid-a", at)
			if ok && (len(out) == 0 || s.Time.Sub(t0) != out[len(out)-1]) {
				out = append(out, s.Time.Sub(t0))
			}
		}
		return out
	}
	got := times(7)
	if len(got) < 6 || got[0] >= 10*time.Second {
		t.Fatalf("measurements %v: want the first within 10s, then every 10-20s for 2m", got)
	}
	for i := 1; i < len(got); i++ {
		if d := got[i] - got[i-1]; d < 10*time.Second || d >= 20*time.Second {
			t.Errorf("measurements %v: %s between #%d and #%d, want 10s to 20s", got, d, i-1, i)
		}
	}
	if diff := cmp.Diff(got, times(7)); diff != "" {
		t.Errorf("the same seed measures at other times:\n%s", diff)
	}
	if cmp.Equal(got, times(8)) {
		t.Errorf("seeds 7 and 8 measure at the same times %v", got)
	}
}

func TestConditionClearsAfterTheTransitionPeriodAndTheTaintFollowsTheStatusUpdate(t *testing.T) {
	m := model(pod("leak", 0, 0, Ramp{Start: 1800 * mi, Rate: mi}))
	timing := DefaultTiming()
	timing.PodKill, timing.PodCleanup = 500*time.Millisecond, 500*time.Millisecond
	res := simulate(t, m, Options{Kubelet: noNotifier(hard200(t)), Timing: timing}, 1)
	var got []string
	for _, e := range res.Runs[0].Events {
		if e.Kind == KindCondition || e.Kind == KindTaint {
			got = append(got, FormatOffset(time.Duration(e.Offset))+" "+string(e.Kind)+" "+strings.Fields(e.Detail)[0])
		}
	}
	// Met at the 50 s sync, which evicts; the kill ends at 50.5 s, the cleanup wait at the first check
	// a second later, 51.5 s, whose sync observes nothing met, and so do the 61.5 s and 71.5 s syncs;
	// at 71.5 s the condition was last observed 21.5 s ago (>= 20 s): cleared. Status updates every
	// 10 s from 10 s carry both to the Node.
	want := []string{"+0:50.0 condition True:", "+0:50.0 taint added:", "+1:11.5 condition False:", "+1:20.0 taint removed:"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conditions and taints (-want +got):\n%s", diff)
	}
}

func TestMinimumReclaimKeepsEvictingUntilThresholdPlusMinReclaim(t *testing.T) {
	p := 20 * time.Second
	cfg := config(t, threshold.Input{EvictionHardSet: true, EvictionHard: map[string]string{"allocatableMemory.available": "200Mi"},
		EvictionMinimumReclaim: map[string]string{"allocatableMemory.available": "500Mi"}, EvictionPressureTransitionPeriod: &p})
	// 1900Mi used: a goes; 1500Mi used, 548Mi available is above 200Mi but below 200Mi + 500Mi: b goes
	// too; 1300Mi used, 748Mi available: done (c is below its request, last in the ranking).
	m := model(pod("a", 0, 0, Ramp{Start: 400 * mi}), pod("b", 0, 0, Ramp{Start: 200 * mi}), pod("c", 2000*mi, 0, Ramp{Start: 1300 * mi}))
	res := simulate(t, m, Options{Kubelet: cfg}, 1)
	var got []string
	for _, e := range evictions(res, RunKubelet) {
		got = append(got, e.pod)
	}
	if diff := cmp.Diff([]string{"default/a", "default/b"}, got); diff != "" {
		t.Errorf("evictions (-want +got):\n%s", diff)
	}
}

func TestSoftThresholdWaitsForItsGracePeriod(t *testing.T) {
	p := 20 * time.Second
	cfg := config(t, threshold.Input{EvictionHardSet: true, EvictionHard: map[string]string{},
		EvictionSoft: map[string]string{"allocatableMemory.available": "300Mi"}, EvictionSoftGracePeriod: map[string]string{
			"allocatableMemory.available": "30s"}, EvictionPressureTransitionPeriod: &p, EvictionMaxPodGracePeriod: 5})
	m := model(pod("a", 0, 0, Ramp{Start: 1800 * mi}))
	res := simulate(t, m, Options{Kubelet: cfg}, 1)
	got := events(res, RunKubelet, KindEvict)
	if len(got) != 1 || time.Duration(got[0].Offset) != 30*time.Second || got[0].Eviction.GraceSeconds != 5 {
		t.Errorf("evictions %+v, want default/a at 30s (met at 0s, grace 30s) with grace 5s", got)
	}
}

func TestCriticalPodsAreNeverEvicted(t *testing.T) {
	crit := pod("crit", 0, 0, Ramp{Start: 1900 * mi})
	crit.Candidate.Critical, crit.Candidate.CriticalReason = true, "static pod"
	m := model(crit, pod("small", 0, 0, Ramp{Start: 10 * mi}))
	res := simulate(t, m, Options{Kubelet: hard200(t)}, 1)
	var got []string
	for _, e := range evictions(res, RunKubelet) {
		got = append(got, e.pod)
	}
	if diff := cmp.Diff([]string{"default/small"}, got); diff != "" {
		t.Errorf("evictions (-want +got):\n%s", diff)
	}
}

// The notifier's sync evicts the leak at about 29.8 s and its kill takes a second; the loop's sync at
// 30.3 s still sees the pods cgroup below the threshold and ranks the leak first again. The kubelet
// evicts it again (its log says so twice) and waits for its cleanup; it does not evict the next pod.
func TestALoopSyncDuringTheNotifiersKillJoinsItInsteadOfEvictingTheNextPod(t *testing.T) {
	m := model(pod("leak", 0, 0, Ramp{Start: 1400 * mi, Rate: 10 * mi}), pod("steady", 0, 0, Ramp{Start: 150 * mi}))
	timing := DefaultTiming()
	timing.FirstSync, timing.PodKill = 300*time.Millisecond, time.Second
	res := simulate(t, m, Options{Kubelet: hard200(t), Timing: timing}, 1)
	var got []string
	for _, e := range events(res, RunKubelet, KindEvict) {
		got = append(got, e.Subject)
	}
	again := events(res, RunKubelet, KindEvictAgain)
	if diff := cmp.Diff([]string{"default/leak"}, got); diff != "" || len(again) != 1 || again[0].Subject != "default/leak" {
		t.Fatalf("evictions (-want +got):\n%s\nevicted again: %+v", diff, again)
	}
	if at := time.Duration(again[0].Offset); at != 30300*time.Millisecond || !strings.Contains(again[0].Detail, "joins it") {
		t.Errorf("evicted again at %s (%q), want the loop's sync at 30.3s joining the kill", at, again[0].Detail)
	}
}
