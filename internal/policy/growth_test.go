package policy

import (
	"math"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

func TestGrowthOtherThanPageCache(t *testing.T) {
	const mi = 1 << 20
	v := ReclaimView{Signal: signal.AllocatableMemoryAvailable, WorkingSet: 260 * mi, Kubelet: 200 * mi}
	for _, tc := range []struct {
		name            string
		g               growth
		ws              int64
		crosses, leaves bool
	}{
		{name: "a pod growing as fast as the scope's fall takes the working set to the kubelet within the horizon",
			g: growth{scope: 30 * mi, pods: 30 * mi}, crosses: true},
		{name: "a fall of the scope's figure that no pod's usage shows is not growth",
			g: growth{scope: 30 * mi, pods: 10 * mi}},
		{name: "growth at least half of it in pods in flight is left to their eviction",
			g: growth{scope: 30 * mi, inFlight: 15 * mi, pods: 15 * mi}, leaves: true},
		{name: "growth too slow to reach the kubelet's threshold within the horizon is not acted on",
			g: growth{scope: 5 * mi, pods: 5 * mi}},
		{name: "below the kubelet's threshold already it is not this rule's to decide",
			g: growth{scope: 30 * mi, pods: 30 * mi}, ws: 190 * mi},
		{name: "the pods' growth sets the time when the scope's figure is offset by memory freed elsewhere",
			g: growth{scope: 2 * mi, pods: 39 * mi}, crosses: true},
		{name: "usage other than file pages that does not grow is not growth",
			g: growth{pods: 30 * mi}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := v
			if tc.ws != 0 {
				w.WorkingSet = tc.ws
			}
			if got := tc.g.crossing(w, 10*time.Second); (got != "") != tc.crosses {
				t.Errorf("crossing = %q, want crossing %v", got, tc.crosses)
			}
			if got := tc.g.dying(); (got != "") != tc.leaves {
				t.Errorf("dying = %q, want left to the pods in flight %v", got, tc.leaves)
			}
		})
	}
}

func TestAPodsGrowthIsItsUsageOtherThanFilePagesOverAtLeastTheRateSpan(t *testing.T) {
	const mi = 1 << 20
	cfg := ReclaimConfig{MinRateSpan: time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(ws, active uint64, at time.Time) rank.Candidate {
		return rank.Candidate{UID: "hog", Stats: &signal.PodStats{Time: at, MemoryWorkingSet: signal.Uint64(ws),
			Memory: &signal.MemoryStat{ActiveFile: signal.Uint64(active)}}}
	}
	var st State
	st.recordPodGrowth(rank.Candidate{UID: "hog"}, t0, cfg) // listed without a cgroup: holds nothing yet
	st.recordPodGrowth(pod(30*mi, 4*mi, t0.Add(100*time.Millisecond)), t0.Add(100*time.Millisecond), cfg)
	if got, want := st.podGrowth("hog", cfg), float64(26*mi); got != want {
		t.Errorf("growth over 100ms = %.0f/s, want %.0f/s (26Mi over the 1s rate span, not over 100ms)", got, want)
	}
	st.recordPodGrowth(pod(330*mi, 4*mi, t0.Add(2*time.Second)), t0.Add(2*time.Second), cfg)
	// The trend keeps the newest sample at least the rate span older than the latest: 26Mi at 100ms.
	if got, want := st.podGrowth("hog", cfg), float64(300*mi)/1.9; math.Abs(got-want) > 1 {
		t.Errorf("growth over 1.9s = %.0f/s, want %.0f/s", got, want)
	}
	st.recordPodGrowth(pod(330*mi, 300*mi, t0.Add(3*time.Second)), t0.Add(3*time.Second), cfg)
	if got := st.podGrowth("hog", cfg); got != 0 {
		t.Errorf("a working set that grew by active file pages alone: growth %.0f/s, want 0", got)
	}
}

func TestAPodFirstSeenAtAStepHeldNothingAtTheLastOne(t *testing.T) {
	const mi = 1 << 20
	cfg := ReclaimConfig{MinRateSpan: time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	hog := rank.Candidate{UID: "hog", Stats: &signal.PodStats{Time: t0.Add(1125 * time.Millisecond),
		MemoryWorkingSet: signal.Uint64(32 * mi), Memory: &signal.MemoryStat{ActiveFile: signal.Uint64(0)}}}
	var st State
	st.recordPodGrowth(hog, t0, cfg) // the agent's first step: nothing known before it
	if _, ok := st.podNF["hog"].rise(cfg.MinRateSpan); ok {
		t.Errorf("a pod seen at the first step has a rate")
	}
	st = State{podsAt: t0.Add(time.Second)}
	st.recordPodGrowth(hog, t0.Add(1125*time.Millisecond), cfg)
	if got, want := st.podGrowth("hog", cfg), float64(32*mi); got != want {
		t.Errorf("growth = %.0f/s, want %.0f/s (32Mi since the last step, over the 1s rate span)", got, want)
	}
}

func TestTheKubeletKillTimesTheKubeletsThresholdByTheFasterOfTheGrowthAndTheWorkingSetsFall(t *testing.T) {
	const mi = 1 << 20
	sig := signal.AllocatableMemoryAvailable
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name    string
		prev    int64 // the working set's available amount at the last step, 100ms before
		reclaim bool
		kills   bool
	}{
		{name: "a hog that starts slowly and then falls 200Mi/s is killed 600ms from the kubelet's threshold", prev: 540 * mi, kills: true},
		{name: "growth of 20Mi/s alone leaves 6s: evicted, not killed", prev: 520 * mi},
		{name: "a reclaim planned in the same step holds the working set up: not killed", prev: 540 * mi, reclaim: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := State{wsLast: map[signal.Signal]wsTrend{sig: {obs: []signal.Observation{
				{Time: t0, Available: tc.prev}, {Time: t0.Add(100 * time.Millisecond), Available: 520 * mi}}}}}
			p := &Plan{Target: &Target{Signal: sig, GrowersOnly: true, Growth: 10 * mi, GrowthRate: 20 * mi},
				Reclaim: []ReclaimView{{Signal: sig, KubeletKnown: true, Kubelet: 400 * mi, WorkingSet: 520 * mi}}}
			if tc.reclaim {
				p.Reclaims = []ReclaimRequest{{Signal: sig, Bytes: 300 * mi}}
			}
			v := victim{ev: decision.Eviction{UID: "hog", Namespace: "default", Name: "hog", Signal: sig}}
			k, ok := st.kubeletKill(v, p, Config{KillLead: 2 * time.Second})
			if ok != tc.kills {
				t.Fatalf("killed %v (%+v), want %v", ok, k, tc.kills)
			}
			if ok && k.ETA != 600*time.Millisecond {
				t.Errorf("eta %s, want 600ms (120Mi at 200Mi/s)", k.ETA)
			}
		})
	}
}
