package decision

import (
	"fmt"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// PredictOptions tune PredictOrder.
type PredictOptions struct {
	// IgnoreGrace treats every met threshold as if its grace period had passed (what happens if the
	// pressure lasts long enough).
	IgnoreGrace bool
}

// Predicted is one pod in the predicted eviction order.
type Predicted struct {
	// Eviction is what the kubelet would do to the pod when its turn comes (message, grace, annotations).
	Eviction Eviction
	// Critical pods are ranked but never evicted; the walk skips them.
	Critical       bool
	CriticalReason string
}

// Prediction is the order in which pods would be evicted if the pressure persisted and the stats did not
// change. The kubelet evicts one pod per step and re-ranks with fresh stats each time, so only the first
// non-critical entry is certain.
type Prediction struct {
	// Acted are the thresholds that would drive eviction, in the order used; empty means no eviction.
	Acted    []ThresholdID
	Resource signal.Resource
	Ranking  *rank.Ranking
	Order    []Predicted
	Trace    Trace
}

// PredictOrder walks the full ranking for the thresholds that are (or, with IgnoreGrace, will be) acted
// on, from the given state and input. It ignores the stale-stats guard, node-level reclaim and the
// local-storage path, which only delay or preempt the walk.
func PredictOrder(st State, in Input, opts PredictOptions) Prediction {
	var p Prediction
	cfg := in.Config
	obs := in.Snapshot.Observations
	met := metIDs(cfg, allIDs(cfg), obs, false, &p.Trace, "")
	if prev := knownIDs(st.ThresholdsMet, len(cfg.Thresholds)); len(prev) > 0 {
		met = merge(met, metIDs(cfg, prev, obs, true, &p.Trace, "previously acted on, "))
	}
	toAct := met
	if !opts.IgnoreGrace {
		toAct = graceMet(cfg, firstObserved(met, st.FirstObservedAt, in.Now), in.Now, &p.Trace)
	}
	if len(toAct) == 0 {
		p.Trace.add(KindNothing, "", "no threshold would be acted on")
		return p
	}
	p.Acted = sortActed(cfg, toAct)
	chosen := cfg.Thresholds[p.Acted[0]]
	p.Resource = chosen.Signal.Resource()
	p.Trace.add(KindResource, subject(cfg, p.Acted[0]), fmt.Sprintf("reclaim %s (acted on: %s)", p.Resource, joinIDs(p.Acted)))
	r := rank.Rank(chosen.Signal, in.Snapshot.Filesystems, in.Candidates)
	p.Ranking = &r
	traceRanking(&p.Trace, r)
	for i, e := range r.Entries {
		p.Order = append(p.Order, Predicted{
			Eviction:       pressureEviction(cfg, p.Acted, obs, e.Candidate, decidedBy(r, i)),
			Critical:       e.Candidate.Critical,
			CriticalReason: e.Candidate.CriticalReason,
		})
	}
	return p
}
