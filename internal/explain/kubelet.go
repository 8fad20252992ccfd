package explain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// predict runs decision.PredictOrder as if the pressure persisted and renders the result.
func predict(in Input, now time.Time) Kubelet {
	k := Kubelet{LocalStorageCapacityIsolation: !in.DisableLocalStorageCapacityIsolation, ThresholdsMet: []string{},
		NodeConditions: []string{}, EvictionOrder: []Victim{}, Semantics: in.Semantics}
	k.Semantics.Minor = in.Semantics.MinorOrDefault()
	cands := append([]rank.Candidate{}, in.Candidates...)
	sort.SliceStable(cands, func(i, j int) bool { return podKey(cands[i]) < podKey(cands[j]) })
	p := decision.PredictOrder(decision.State{}, decision.Input{Now: now, Snapshot: in.Snapshot, Candidates: cands,
		Config: in.Config, DisableLocalStorageCapacityIsolation: in.DisableLocalStorageCapacityIsolation,
		Semantics: in.Semantics},
		decision.PredictOptions{IgnoreGrace: true})
	k.EvictionOrder = localVictims(p, cands, now)
	nLocal := len(k.EvictionOrder)
	local := localNotes(k.LocalStorageCapacityIsolation, k.EvictionOrder, in.Snapshot.Filesystems)
	if len(p.Acted) == 0 {
		k.Notes = []string{"no threshold is met: the kubelet would evict nothing"}
		if nLocal > 0 {
			k.Notes = []string{"no threshold is met: after the local-storage evictions the kubelet evicts nothing"}
		}
		k.Notes = append(append(k.Notes, local...), refusedLocal(p, nil)...)
		return k
	}
	cfg := in.Config
	chosen := cfg.Thresholds[p.Acted[0]]
	k.ThresholdsMet, k.NodeConditions = metSignals(cfg, p.Acted)
	k.ResourceToReclaim, k.ActedOn = string(p.Resource), chosen.String()
	k.Ranking = keyNames(chosen.Signal, p.Ranking)
	k.usageUnit = rankingUnit(chosen.Signal)
	k.Notes = append(local, notes(cfg, p.Acted, in.Snapshot.Filesystems)...)
	for i, pr := range p.Order {
		k.EvictionOrder = append(k.EvictionOrder, victim(p.Ranking, i, pr, k.usageUnit, now))
	}
	linkLocal(k.EvictionOrder, nLocal)
	k.Notes = append(k.Notes, refusedLocal(p, k.EvictionOrder[nLocal:])...)
	k.Notes = append(k.Notes, orderNotes(k.EvictionOrder[nLocal:], nLocal)...)
	return k
}

func podKey(c rank.Candidate) string { return c.Namespace + "/" + c.Name + "/" + c.UID }

func podName(c rank.Candidate) string { return c.Namespace + "/" + c.Name }

// metSignals returns the distinct signals of the acted-on thresholds in acting order and their node
// conditions by name.
func metSignals(cfg threshold.Config, acted []decision.ThresholdID) ([]string, []string) {
	sigs, conds := []string{}, []string{}
	seenSig, seenCond := map[signal.Signal]bool{}, map[signal.NodeCondition]bool{}
	for _, id := range acted {
		s := cfg.Thresholds[id].Signal
		if !seenSig[s] {
			seenSig[s] = true
			sigs = append(sigs, string(s))
		}
		if c := s.Condition(); c != "" && !seenCond[c] {
			seenCond[c] = true
			conds = append(conds, string(c))
		}
	}
	sort.Strings(conds)
	return sigs, conds
}

// keyNames lists the kubelet's ranking keys for sig (rank.Rank's chains), then our tie-breakers.
func keyNames(sig signal.Signal, r *rank.Ranking) []string {
	var keys []rank.Key
	switch {
	case r == nil || !r.Supported:
	case sig.IsMemory():
		keys = []rank.Key{rank.KeyExceedsRequest, rank.KeyPriority, rank.KeyUsageAboveRequest}
	case sig == signal.PIDAvailable:
		keys = []rank.Key{rank.KeyPriority, rank.KeyProcessCount}
	default:
		keys = []rank.Key{rank.KeyExceedsDiskRequest, rank.KeyPriority, rank.KeyDiskUsageAboveRequest}
	}
	out := []string{}
	for _, k := range keys {
		out = append(out, string(k))
	}
	return append(out, "then name, uid (our tie-breaker)")
}

// rankingUnit is the unit of the usage the ranking of sig compares.
func rankingUnit(sig signal.Signal) unit {
	switch sig.Resource() {
	case signal.ResourceMemory, signal.ResourceEphemeralStorage:
		return unitBytes
	}
	return unitCount
}

// victim renders the i-th predicted pod.
func victim(r *rank.Ranking, i int, pr decision.Predicted, u unit, now time.Time) Victim {
	e := r.Entries[i]
	c := e.Candidate
	v := Victim{Pod: podName(c), UID: c.UID, QOSClass: c.QOSClass, Priority: c.Priority, Critical: pr.Critical,
		CriticalReason: pr.CriticalReason, HasStats: e.Values.HasStats, Path: PathPressure, vals: e.Values}
	if e.Values.HasStats {
		v.Usage = exact(e.Values.Usage, u)
		if r.Signal != signal.PIDAvailable {
			v.Request = exact(e.Values.Request, u)
			v.UsageAboveRequest = exact(e.Values.Score, u)
		}
		if c.Stats != nil && !c.Stats.Time.IsZero() && !now.IsZero() {
			v.StatsAgeSeconds = seconds(now.Sub(c.Stats.Time))
		}
	}
	if i < len(r.Steps) {
		v.DecidedBy = string(r.Steps[i].Key)
		v.Why = why(r.Signal, r.Steps[i].Key, e, r.Entries[i+1], u)
	}
	if !pr.Critical {
		v.Message = pr.Eviction.Message
		v.GracePeriodSeconds = pr.Eviction.Grace.Effective
		if len(pr.Eviction.Annotations) > 0 {
			v.Annotations = pr.Eviction.Annotations
		}
	}
	return v
}

// notes lists the assumptions behind the prediction and where the kubelet is nondeterministic.
func notes(cfg threshold.Config, acted []decision.ThresholdID, layout signal.FilesystemLayout) []string {
	var out []string
	for _, id := range acted {
		if t := cfg.Thresholds[id]; !t.IsHard() {
			out = append(out, fmt.Sprintf("soft threshold %s is assumed to have been met for its grace period", t))
		}
	}
	first := cfg.Thresholds[acted[0]]
	if actions := decision.ReclaimActions(first.Signal, layout); len(actions) > 0 {
		names := make([]string, len(actions))
		for i, a := range actions {
			names[i] = string(a)
		}
		out = append(out, fmt.Sprintf("the kubelet first runs %s for %s; assumed to free nothing",
			strings.Join(names, " then "), first.Signal))
	}
	var later []string
	for _, id := range acted[1:] {
		if t := cfg.Thresholds[id]; first.Signal.IsMemory() && !t.Signal.IsMemory() {
			later = append(later, t.String())
		}
	}
	if len(later) > 0 {
		out = append(out, fmt.Sprintf("memory goes first: %s would drive eviction only once memory pressure is relieved",
			strings.Join(later, ", ")))
	}
	var others []string
	for _, id := range acted[1:] {
		t := cfg.Thresholds[id]
		if t.Signal != first.Signal && t.Signal.IsMemory() == first.Signal.IsMemory() {
			others = append(others, t.String())
		}
	}
	if len(others) > 0 {
		out = append(out, fmt.Sprintf("the kubelet picks between %s and %s in map order (random); shown: %s",
			first, strings.Join(others, ", "), first))
	}
	return out
}

// orderNotes explains the limits of the ranked order, after nLocal local-storage victims.
func orderNotes(order []Victim, nLocal int) []string {
	if len(order) == 0 {
		if nLocal > 0 {
			return []string{"eviction thresholds are met, but no other pods are active to evict"}
		}
		return []string{"eviction thresholds are met, but no pods are active to evict"}
	}
	for _, v := range order {
		if !v.Critical {
			if nLocal > 0 {
				return []string{"of the ranking, only the first victim is certain: after the local-storage evictions the " +
					"kubelet evicts one pod per cycle and ranks again with fresh stats"}
			}
			return []string{"only the first victim is certain: the kubelet evicts one pod per cycle and ranks again with fresh stats"}
		}
	}
	if nLocal > 0 {
		return []string{"every other pod is critical: after the local-storage evictions the kubelet evicts nothing and " +
			"retries every 10s"}
	}
	return []string{"every active pod is critical: the kubelet evicts nothing and retries every 10s"}
}
