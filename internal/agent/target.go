package agent

import (
	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// victim is one pod a sync decided to evict, with what the decision knows about it.
type victim struct {
	Eviction decision.Eviction
	// Rank is the 1-based position in the ranking.
	Rank int
	// Usage is what evicting the pod is expected to release for the acted-on signal; Known is false when
	// the pod had no stats.
	Usage int64
	Known bool
}

// target is the evict-to-target computation of the pressure policy.
type target struct {
	// Need is how much the acted-on signal must gain to reach threshold + minimum reclaim, after counting
	// the usage of terminating pods as released. Zero or less means nothing to do.
	Need int64
	// Max caps the number of victims (per-sync cap and rate limiter tokens).
	Max int
}

// selectVictims walks the predicted order (the full ranking the kubelet's walk would use) and takes
// non-critical pods until their usage covers t.Need or t.Max pods are taken. A pod without stats releases
// an unknown amount: it is taken, and the walk stops after it rather than evict more pods blindly.
func selectVictims(p decision.Prediction, t target) []victim {
	if t.Need <= 0 || t.Max <= 0 || p.Ranking == nil {
		return nil
	}
	var out []victim
	var got int64
	for i, pr := range p.Order {
		if pr.Critical {
			continue
		}
		e := p.Ranking.Entries[i]
		v := victim{Eviction: pr.Eviction, Rank: i + 1, Usage: e.Values.Usage, Known: e.Values.HasStats}
		out = append(out, v)
		if !v.Known {
			break
		}
		got += v.Usage
		if got >= t.Need || len(out) >= t.Max {
			break
		}
	}
	return out
}

// need returns how much the signal of threshold id must gain: threshold + minimum reclaim, minus the
// available amount (which already counts released usage).
func need(cfg threshold.Config, id decision.ThresholdID, obs map[signal.Signal]signal.Observation) int64 {
	t := cfg.Thresholds[id]
	o, ok := obs[t.Signal]
	if !ok {
		return 0
	}
	q := threshold.MetQuantity(t, o.Capacity, true)
	return q.Value() - o.Available
}

// released sums the memory working set of the pods whose eviction is already under way.
func released(cands []rank.Candidate, inFlight func(uid string) bool) int64 {
	var sum int64
	for _, c := range cands {
		if !inFlight(c.UID) || c.Stats == nil || c.Stats.MemoryWorkingSet == nil {
			continue
		}
		sum += int64(*c.Stats.MemoryWorkingSet)
	}
	return sum
}

// withReleased returns a copy of the snapshot whose memory signals count rel bytes as available again
// (capped at capacity): memory held by terminating pods is about to be freed.
func withReleased(s signal.Snapshot, rel int64) signal.Snapshot {
	if rel <= 0 {
		return s
	}
	out := s
	out.Observations = make(map[signal.Signal]signal.Observation, len(s.Observations))
	for sig, o := range s.Observations {
		if sig.IsMemory() {
			o.Available = min(o.Available+rel, o.Capacity)
		}
		out.Observations[sig] = o
	}
	return out
}
