package sim

import (
	"testing"
	"time"
)

// loopStats are stats times of a kubelet whose loop syncs from 2.5 s with the gaps given (the e2e
// node's 10.04-10.08 s, and one slow sync of 10.75 s), plus the extra times given (notified syncs).
func loopStats(gaps []time.Duration, extra ...time.Duration) (syncs, all []time.Time) {
	at := t0.Add(2500 * time.Millisecond)
	syncs = append(syncs, at)
	for _, g := range gaps {
		at = at.Add(g)
		syncs = append(syncs, at)
	}
	all = append(all, syncs...)
	for _, e := range extra {
		all = append(all, t0.Add(e))
	}
	return syncs, distinctSorted(all)
}

func distinctSorted(ts []time.Time) []time.Time {
	for i := 1; i < len(ts); i++ {
		for j := i; j > 0 && ts[j].Before(ts[j-1]); j-- {
			ts[j], ts[j-1] = ts[j-1], ts[j]
		}
	}
	return ts
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestInferPhaseFromStatsTimesPlacesTheNextSyncWithinASyncsJitter(t *testing.T) {
	gaps := []time.Duration{ms(10054), ms(10749), ms(10070), ms(10070), ms(10068), ms(10051), ms(10041), ms(10081)}
	for _, tc := range []struct {
		name  string
		extra []time.Duration
		agree int
	}{
		{"the loop alone: every stats time is a sync", nil, 9},
		{"a notified sync between two of the loop's is off the chain", []time.Duration{ms(58200)}, 9},
		{"a notified sync just after the loop's last is passed over for the loop's", []time.Duration{ms(83800)}, 9},
		{"a notified sync an interval after a loop sync but not before the next one: the loop's chain is longer",
			[]time.Duration{ms(76000)}, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			syncs, all := loopStats(gaps, tc.extra...)
			r := Recording{Start: t0, End: t0.Add(95 * time.Second), StatsTimes: all}
			ph, ok := r.InferPhase(10 * time.Second)
			if !ok || !ph.FromStatsTimes {
				t.Fatalf("phase %+v ok %v, want one from the stats times", ph, ok)
			}
			if ph.Agree < 3 || ph.Agree > tc.agree {
				t.Errorf("phase %+v: %d syncs on the chain, want 3 to %d", ph, ph.Agree, tc.agree)
			}
			// The loop's next sync, one more gap of the usual size after its last.
			want := syncs[len(syncs)-1].Add(ms(10060))
			got := t0.Add(ph.FirstSync)
			for got.Before(want.Add(-ph.Period / 2)) {
				got = got.Add(ph.Period)
			}
			if d := got.Sub(want); d.Abs() > 30*time.Millisecond {
				t.Errorf("phase %+v puts the next sync at %s, want %s (±30ms)", ph, got.Sub(t0), want.Sub(t0))
			}
		})
	}
}

func TestInferPhaseWithoutALoopChainInTheStatsTimesUsesTheSummarysSeconds(t *testing.T) {
	// Two stats times an interval apart are not a chain of three; the Summary's seconds then decide.
	r := Recording{Start: t0, End: t0.Add(90 * time.Second),
		StatsTimes: []time.Time{t0.Add(ms(40100)), t0.Add(ms(50160))}}
	for k := 0; k < 9; k++ {
		at := t0.Add(3200*time.Millisecond + time.Duration(k)*10300*time.Millisecond)
		r.PodsMemory = append(r.PodsMemory, MemorySample{At: at.Truncate(time.Second)})
	}
	ph, ok := r.InferPhase(10 * time.Second)
	if !ok || ph.FromStatsTimes || ph.Agree != 9 {
		t.Fatalf("phase %+v ok %v, want the Summary's 9 of 9 seconds", ph, ok)
	}
}

func TestInferPhaseFromStatsTimesLooksOnlyBeforeTheFirstKubeletEviction(t *testing.T) {
	// The loop syncs every 10.06 s until the eviction at 62 s; after it, a sync 1.3 s after the
	// cleanup and a new chain. Only the times before the eviction place the loop.
	syncs, all := loopStats([]time.Duration{ms(10060), ms(10060), ms(10060), ms(10060), ms(10060)})
	all = append(all, t0.Add(ms(63300)), t0.Add(ms(73400)), t0.Add(ms(83500)))
	r := Recording{Start: t0, End: t0.Add(95 * time.Second), StatsTimes: all,
		Pods: []RecordedPod{{Info: PodInfo{End: EndEvicted, By: ActorKubelet, Ended: t0.Add(62 * time.Second)}}}}
	ph, ok := r.InferPhase(10 * time.Second)
	if !ok || !ph.FromStatsTimes || ph.Agree != len(syncs) {
		t.Fatalf("phase %+v ok %v, want the %d syncs before the eviction", ph, ok, len(syncs))
	}
	if got := t0.Add(ph.FirstSync); got.Sub(syncs[0]).Abs() > time.Millisecond {
		t.Errorf("first sync at %s, want %s", got.Sub(t0), syncs[0].Sub(t0))
	}
}
