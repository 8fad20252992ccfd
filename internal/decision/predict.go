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
// non-critical entry of Order is certain.
type Prediction struct {
	// LocalStorage are the pods over a local ephemeral-storage limit (emptyDir sizeLimit, the pod's
	// total or a container's ephemeral-storage limit), in input order, when local-storage isolation is
	// on: the next step evicts all of them, whether or not a threshold is met, and nothing else. The
	// kubelet walks its active pods in an unspecified order, so the order among them is not a prediction.
	LocalStorage []Eviction
	// LocalStorageRefused are the critical pods over such a limit, in input order: the kubelet refuses
	// to evict them at every step. Eviction is what it refuses (the first check that fires).
	LocalStorageRefused []Predicted
	// Acted are the thresholds that would drive eviction, in the order used; empty means no pressure
	// eviction.
	Acted    []ThresholdID
	Resource signal.Resource
	// Ranking and Order rank the candidates not in LocalStorage.
	Ranking *rank.Ranking
	Order   []Predicted
	Trace   Trace
}

// PredictOrder predicts, from the given state and input, the local-storage evictions of the next step
// (unless Input.DisableLocalStorageCapacityIsolation) and then walks the full ranking of the other
// candidates for the thresholds that are (or, with IgnoreGrace, will be) acted on. It ignores the
// stale-stats guard and node-level reclaim, which only delay the walk.
func PredictOrder(st State, in Input, opts PredictOptions) Prediction {
	var p Prediction
	cfg := in.Config
	obs := in.Snapshot.Observations
	rest := in.Candidates
	if !in.DisableLocalStorageCapacityIsolation {
		rest = predictLocal(&p, in.Candidates, in.Snapshot.Filesystems, in.Semantics)
	}
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
	r := rank.Rank(chosen.Signal, in.Snapshot.Filesystems, rest)
	p.Ranking = &r
	traceRanking(&p.Trace, r)
	for i, e := range r.Entries {
		p.Order = append(p.Order, Predicted{
			Eviction:       pressureEviction(cfg, p.Acted, obs, e.Candidate, decidedBy(r, i), in.Semantics),
			Critical:       e.Candidate.Critical,
			CriticalReason: e.Candidate.CriticalReason,
		})
	}
	return p
}

// predictLocal fills the local-storage part of p and returns the candidates left for the ranking.
func predictLocal(p *Prediction, cands []rank.Candidate, layout signal.FilesystemLayout, sem Semantics) []rank.Candidate {
	evicted, refused := localStorageScan(cands, layout, sem, &p.Trace)
	for _, r := range refused {
		p.LocalStorageRefused = append(p.LocalStorageRefused, Predicted{Eviction: r.ev, Critical: true,
			CriticalReason: cands[r.index].CriticalReason})
	}
	if len(evicted) == 0 {
		return cands
	}
	gone := map[int]bool{}
	for _, r := range evicted {
		p.LocalStorage = append(p.LocalStorage, r.ev)
		gone[r.index] = true
	}
	rest := make([]rank.Candidate, 0, len(cands)-len(gone))
	for i, c := range cands {
		if !gone[i] {
			rest = append(rest, c)
		}
	}
	p.Trace.add(KindNothing, "", fmt.Sprintf("local-storage evictions (%d pods) come first and that step evicts "+
		"nothing for pressure; the ranking is of the other pods", len(evicted)))
	return rest
}
