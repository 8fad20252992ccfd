package sim

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// kubelet is the kubelet's eviction manager in one run: decision.Step on fresh node observations and
// cached pod stats, its synchronize loop (housekeeping, the cleanup wait after an eviction), its memcg
// notifiers and its node status updates.
type kubelet struct {
	cfg          threshold.Config
	disableLocal bool
	sem          decision.Semantics
	timing       Timing
	st           decision.State

	lastSync time.Time
	// lastEvicted are the pods the sync at lastSync evicted (or joined the kill of).
	lastEvicted []string
	// waiting holds the pods the main loop waits to be cleaned up, since waitStart.
	waiting   []string
	waitStart time.Time
	// armed are the memcg notifiers (threshold levels in available bytes), armed at lastArm; handlers
	// are their handler goroutines, by threshold (index in cfg.Thresholds), which outlive a re-arm.
	armed    []notifier
	lastArm  time.Time
	handlers []handler
	// conditions are the kubelet's conditions now; written are those on the Node object.
	conditions []signal.NodeCondition
	written    []signal.NodeCondition
}

// sync runs one synchronize at t and returns the pods it evicted.
func (k *kubelet) sync(r *run, t time.Time, trigger string) []string {
	k.lastSync = t
	mem := r.node.memory(t)
	// A pod the kubelet is killing is still active until its kill is done: a sync beside the one that
	// killed it (the loop and a notifier, or two notifiers) ranks it too (see rejoin).
	cands := candidates(r.node.active(t), func(uid string) (signal.PodStats, bool) { return r.world.Cached(uid, t) })
	snap := signal.Snapshot{Observations: observations(mem, t), Pods: map[string]signal.PodStats{}}
	for _, c := range cands {
		if c.Stats != nil {
			snap.Pods[c.UID] = *c.Stats
		}
	}
	k.arm(snap, t)
	in := decision.Input{Now: t, Snapshot: snap, Candidates: cands, Config: k.cfg,
		DisableLocalStorageCapacityIsolation: k.disableLocal, Semantics: k.sem}
	// Only memory is observed, which has no node-level reclaim: one Step is the whole sync.
	next, d := decision.Step(k.st, in)
	k.st = next
	k.setConditions(r, t, d.Conditions)
	var evicted []string
	for _, ev := range d.Evictions {
		info := r.evictionInfo(ev, d, in, t)
		if k.rejoin(r, t, ev.UID, info, trigger) {
			evicted = append(evicted, ev.UID)
			continue
		}
		// The kill blocks the sync until the pod is stopped (killPodNow); its resources are reclaimed
		// PodCleanup after that.
		released := t.Add(k.timing.PodKill)
		r.node.evict(ev.UID, kill{by: ActorKubelet, at: t, released: released, cleaned: released.Add(k.timing.PodCleanup)})
		r.add(Event{At: t, Actor: ActorKubelet, Kind: KindEvict, Subject: info.Pod, Eviction: info,
			Detail: evictDetail(info, trigger)})
		evicted = append(evicted, ev.UID)
	}
	k.lastEvicted = evicted
	return evicted
}

// rejoin handles a sync's victim that another sync of the kubelet is killing: the kubelet evicts it
// again (its log says "pod is evicted successfully" twice, as the real node's logs show after two
// notifiers fired together), this sync's kill joins the one under way and returns when it is done, and
// no other pod is evicted by it: the loop then waits for the pod's cleanup. Modelling it as a new
// victim evicted the next pod a sync early (docs/simulate.md, "Validation").
func (k *kubelet) rejoin(r *run, t time.Time, uid string, info *Eviction, trigger string) bool {
	kl, ok := r.node.killed[uid]
	if !ok || kl.by != ActorKubelet || !t.Before(kl.released) {
		return false
	}
	r.add(Event{At: t, Actor: ActorKubelet, Kind: KindEvictAgain, Subject: info.Pod, Eviction: info,
		Detail: evictDetail(info, trigger) + fmt.Sprintf("; its kill from %s is under way: this sync joins it (done %s) and evicts no other pod",
			FormatOffset(kl.at.Sub(r.start)), FormatOffset(kl.released.Sub(r.start)))})
	return true
}

// setConditions records a change of the kubelet's node conditions.
func (k *kubelet) setConditions(r *run, t time.Time, cs []signal.NodeCondition) {
	if sameConditions(cs, k.conditions) {
		return
	}
	for _, c := range diffConditions(cs, k.conditions) {
		r.add(Event{At: t, Actor: ActorKubelet, Kind: KindCondition, Subject: string(c), Detail: "True: a threshold is met"})
	}
	for _, c := range diffConditions(k.conditions, cs) {
		r.add(Event{At: t, Actor: ActorKubelet, Kind: KindCondition, Subject: string(c),
			Detail: fmt.Sprintf("False: no threshold met for the transition period %s", k.cfg.PressureTransitionPeriod)})
	}
	k.conditions = append([]signal.NodeCondition{}, cs...)
}

// writeStatus is a node status update: the conditions reach the Node, and the node lifecycle
// controller's NoSchedule taint follows them.
func (k *kubelet) writeStatus(r *run, t time.Time) {
	for _, c := range diffConditions(k.conditions, k.written) {
		r.add(Event{At: t, Actor: ActorNode, Kind: KindTaint, Subject: conditionTaint(c),
			Detail: "added: the node status update reports " + string(c)})
	}
	for _, c := range diffConditions(k.written, k.conditions) {
		r.add(Event{At: t, Actor: ActorNode, Kind: KindTaint, Subject: conditionTaint(c),
			Detail: "removed: the node status update clears " + string(c)})
	}
	k.written = append([]signal.NodeCondition{}, k.conditions...)
}

// conditionTaint is the taint the node lifecycle controller adds for a condition.
func conditionTaint(c signal.NodeCondition) string {
	switch c {
	case signal.MemoryPressure:
		return "node.kubernetes.io/memory-pressure:NoSchedule"
	case signal.DiskPressure:
		return "node.kubernetes.io/disk-pressure:NoSchedule"
	case signal.PIDPressure:
		return "node.kubernetes.io/pid-pressure:NoSchedule"
	}
	return string(c)
}

func sameConditions(a, b []signal.NodeCondition) bool {
	return len(diffConditions(a, b)) == 0 && len(diffConditions(b, a)) == 0
}

// diffConditions returns the conditions in a and not in b, in a's order.
func diffConditions(a, b []signal.NodeCondition) []signal.NodeCondition {
	var out []signal.NodeCondition
	for _, c := range a {
		found := false
		for _, d := range b {
			found = found || c == d
		}
		if !found {
			out = append(out, c)
		}
	}
	return out
}

// cleaned reports whether the pods the main loop waits for are cleaned up at t.
func (k *kubelet) cleaned(n *node, t time.Time) bool {
	for _, uid := range k.waiting {
		if kl, ok := n.killed[uid]; ok && t.Before(kl.cleaned) {
			return false
		}
	}
	return true
}
