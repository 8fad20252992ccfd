package decision

import (
	"fmt"
	"sort"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// signalOrder is our deterministic stand-in for the kubelet's byEvictionPriority: memory signals first
// (the only guarantee the kubelet gives), memory.available before allocatableMemory.available, then the
// other signals by name. Within a signal, Config order (hard before soft).
func signalOrder(s signal.Signal) (int, signal.Signal) {
	switch s {
	case signal.MemoryAvailable:
		return 0, s
	case signal.AllocatableMemoryAvailable:
		return 1, s
	}
	return 2, s
}

// sortActed orders the acted-on thresholds and says whether the kubelet could have chosen differently.
func sortActed(cfg threshold.Config, ids []ThresholdID) []ThresholdID {
	out := append([]ThresholdID{}, ids...)
	sort.SliceStable(out, func(i, j int) bool {
		ri, si := signalOrder(cfg.Thresholds[out[i]].Signal)
		rj, sj := signalOrder(cfg.Thresholds[out[j]].Signal)
		if ri != rj {
			return ri < rj
		}
		if si != sj {
			return si < sj
		}
		return out[i] < out[j]
	})
	return out
}

// ambiguous returns the other thresholds the kubelet might have picked first: with several memory
// thresholds any memory one, otherwise any of them (map order).
func ambiguous(cfg threshold.Config, acted []ThresholdID) []ThresholdID {
	firstMem := cfg.Thresholds[acted[0]].Signal.IsMemory()
	var out []ThresholdID
	for _, id := range acted[1:] {
		if cfg.Thresholds[id].Signal.IsMemory() == firstMem {
			out = append(out, id)
		}
	}
	return out
}

// ReclaimActions is the kubelet's buildSignalToNodeReclaimFuncs: the node-level reclaim the kubelet
// runs, in order, before evicting a pod for sig on the given filesystem layout (nil: none).
func ReclaimActions(sig signal.Signal, layout signal.FilesystemLayout) []ReclaimAction {
	both := []ReclaimAction{ContainerGC, ImageGC}
	nodefs, imagefs := both, both
	switch {
	case layout.DedicatedImageFs && layout.SplitContainerFs:
		nodefs, imagefs = []ReclaimAction{ContainerGC}, []ReclaimAction{ImageGC}
	case layout.DedicatedImageFs:
		nodefs = nil
	}
	switch sig {
	case signal.NodeFsAvailable, signal.NodeFsInodesFree:
		return nodefs
	case signal.ImageFsAvailable, signal.ImageFsInodesFree:
		return imagefs
	case signal.ContainerFsAvailable, signal.ContainerFsInodesFree:
		if layout.DedicatedImageFs && !layout.SplitContainerFs {
			return imagefs
		}
		return nodefs
	}
	return nil
}

// actOn performs steps 18-25 of synchronize for the acted-on thresholds.
func actOn(d *Decision, in Input, toAct []ThresholdID) {
	cfg := in.Config
	acted := sortActed(cfg, toAct)
	d.Acted = acted
	chosen := cfg.Thresholds[acted[0]]
	d.Resource = chosen.Signal.Resource()
	d.Trace.add(KindResource, subject(cfg, acted[0]), fmt.Sprintf("reclaim %s (acted on: %s)", d.Resource, joinIDs(acted)))
	if alt := ambiguous(cfg, acted); len(alt) > 0 {
		d.Trace.add(KindNote, "", fmt.Sprintf("the kubelet picks among %s and %s in map order (random); we pick by signal order",
			joinIDs(acted[:1]), joinIDs(alt)))
	}
	d.NodeEvent = &NodeEvent{Type: "Warning", Reason: "EvictionThresholdMet", Message: "Attempting to reclaim " + string(d.Resource)}
	d.Trace.add(KindEvent, "node", fmt.Sprintf("%s %s %q", d.NodeEvent.Type, d.NodeEvent.Reason, d.NodeEvent.Message))
	if nodeReclaimed(d, in, chosen.Signal) {
		return
	}
	if len(in.Candidates) == 0 {
		d.Trace.add(KindNothing, "", "eviction thresholds have been met, but no pods are active to evict")
		return
	}
	r := rank.Rank(chosen.Signal, in.Snapshot.Filesystems, in.Candidates)
	d.Ranking = &r
	for _, id := range acted {
		if o := in.Snapshot.Observations[cfg.Thresholds[id].Signal]; !o.Time.IsZero() {
			d.StatsAge = append(d.StatsAge, StatsAge{Signal: cfg.Thresholds[id].Signal, Age: in.Now.Sub(o.Time)})
		}
	}
	traceRanking(&d.Trace, r)
	for i, e := range r.Entries {
		if e.Candidate.Critical {
			d.Trace.add(KindSkip, podName(e.Candidate), "cannot evict a critical pod ("+e.Candidate.CriticalReason+")")
			continue
		}
		ev := pressureEviction(cfg, acted, in.Snapshot.Observations, e.Candidate, decidedBy(r, i), in.Semantics)
		d.Evictions = append(d.Evictions, ev)
		d.Trace.add(KindEvict, podName(e.Candidate), fmt.Sprintf("%s grace override %ds effective %ds, message %q",
			ev.MetricLabel, ev.Grace.Override, ev.Grace.Effective, ev.Message))
		return
	}
	d.Trace.add(KindNothing, "", "unable to evict any pods from the node")
}

// nodeReclaimed performs node-level reclaim (§3.4) and reports whether it relieved the pressure.
func nodeReclaimed(d *Decision, in Input, sig signal.Signal) bool {
	actions := ReclaimActions(sig, in.Snapshot.Filesystems)
	if len(actions) == 0 {
		return false
	}
	nr := &NodeReclaim{Signal: sig, Actions: actions}
	d.NodeReclaim = nr
	if in.AfterReclaim == nil {
		nr.Pending = true
		d.Trace.add(KindReclaim, string(sig), fmt.Sprintf("run %v, then step again with the post-reclaim observations", actions))
		return true
	}
	var scratch Trace
	nr.StillMet = metIDs(in.Config, allIDs(in.Config), in.AfterReclaim.Observations, true, &scratch, "after reclaim ")
	nr.Succeeded = len(nr.StillMet) == 0
	for _, e := range scratch {
		if e.Kind == KindThreshold {
			e.Kind = KindReclaim
		}
		d.Trace = append(d.Trace, e)
	}
	if nr.Succeeded {
		d.Trace.add(KindReclaim, string(sig), fmt.Sprintf("%v relieved the pressure: no pod evicted", actions))
		return true
	}
	d.Trace.add(KindReclaim, string(sig), fmt.Sprintf("%v not enough: still met %s", actions, joinIDs(nr.StillMet)))
	return false
}

// pressureEviction builds the eviction of c for the acted-on thresholds.
func pressureEviction(cfg threshold.Config, acted []ThresholdID, obs map[signal.Signal]signal.Observation,
	c rank.Candidate, by rank.Key, sem Semantics) Eviction {
	chosen := cfg.Thresholds[acted[0]]
	res := chosen.Signal.Resource()
	msg, ann := evictionMessage(res, c, cfg, acted, obs)
	return Eviction{
		UID: c.UID, Namespace: c.Namespace, Name: c.Name, Path: PathPressure,
		Threshold: acted[0], Signal: chosen.Signal, MetricLabel: string(chosen.Signal),
		Message: msg, Annotations: ann,
		Grace:     killGrace(chosen.IsHard(), cfg.MaxPodGracePeriodSeconds, c, sem),
		Condition: &PodCondition{Type: "DisruptionTarget", Status: "True", Reason: "TerminationByKubelet", Message: msg},
		DecidedBy: by,
	}
}

func decidedBy(r rank.Ranking, i int) rank.Key {
	if i < len(r.Steps) {
		return r.Steps[i].Key
	}
	return ""
}

func traceRanking(tr *Trace, r rank.Ranking) {
	for i, e := range r.Entries {
		detail := fmt.Sprintf("%d. priority %d", i+1, e.Values.Priority)
		if !e.Values.HasStats {
			detail += ", no stats"
		} else {
			detail += fmt.Sprintf(", usage %d request %d", e.Values.Usage, e.Values.Request)
		}
		if i < len(r.Steps) {
			s := r.Steps[i]
			detail += fmt.Sprintf("; before next by %s (%s vs %s)", s.Key, s.Before, s.After)
		}
		tr.add(KindRank, podName(e.Candidate), detail)
	}
}

func sortSignals(s []signal.Signal) {
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
}
