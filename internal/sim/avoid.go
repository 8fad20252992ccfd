package sim

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/rank"
)

// The avoidances of the node in a run with the agent: the agent's ladder publishes an avoidance of the
// node for the owner of each pod it evicts (policy.History: AvoidBefore, Record, a longer one after an
// eviction loop), and a pod of an avoided owner that appears while the avoidance holds is kept off the
// node (the chart's admission policy gives it a required node anti-affinity; the model does not place
// it elsewhere, nor bring it back when the avoidance ends).

// ownerUIDPrefix makes the owner UID of a simulated pod: the model names owners, the policy tells them
// apart by UID (policy.Avoidable).
const ownerUIDPrefix = "sim-owner-"

// podWorkload is the pod's owner as the agent sees it (the zero Workload: a bare pod). A model's pod
// names its workload itself (pods[].owner); a recorded pod's owner is its controller owner reference,
// not resolved further (a ReplicaSet stays a ReplicaSet).
func podWorkload(c rank.Candidate) policy.Workload {
	if c.OwnerKind == "" || c.OwnerName == "" {
		return policy.Workload{}
	}
	return policy.Workload{Kind: c.OwnerKind, Namespace: c.Namespace, Name: c.OwnerName,
		UID: ownerUIDPrefix + c.OwnerKind + "/" + c.Namespace + "/" + c.OwnerName}
}

// workloadOf is the owner of the candidate uid (zero when it is not a candidate).
func workloadOf(cands []rank.Candidate, uid string) policy.Workload {
	for _, c := range cands {
		if c.UID == uid {
			return podWorkload(c)
		}
	}
	return policy.Workload{}
}

// avoidBefore is the ladder's first move: the owner's avoidance, published before the eviction.
func (a *policyAgent) avoidBefore(o policy.Workload, now time.Time) (policy.Avoidance, bool) {
	if a.history == nil {
		return policy.Avoidance{}, false
	}
	return a.history.AvoidBefore(o, now)
}

// record is the ladder's last step: a carried-out eviction is recorded (policy.History.Record: the
// owner's avoidance, escalated when it closes a loop); one a PodDisruptionBudget stopped takes the
// avoidance published before it back (Restore). It returns the owner's avoidance once the eviction is
// carried out (zero when there is none) and the loop it closes.
func (a *policyAgent) record(prev policy.Avoidance, avoided, carried bool, e policy.HistoryEntry) (policy.Avoidance, *policy.EvictionLoop) {
	switch {
	case a.history == nil:
		return policy.Avoidance{}, nil
	case !carried:
		if avoided {
			a.history.Restore(e.Owner, prev)
		}
		return policy.Avoidance{}, nil
	}
	loop, ok := a.history.Record(e)
	av := a.history.Avoidance(e.Owner)
	if !ok {
		return av, nil
	}
	return av, &loop
}

// avoidance is an avoidance of the node the simulated agent published, with when it was (last) started.
type avoidance struct {
	from time.Time
	a    policy.Avoidance
}

// avoiding keeps the avoidances the agent's step at t left in force. An avoidance that had ended and
// is published again starts anew at t; ended ones stay, for the pods that appeared before the step.
func (g *agent) avoiding(t time.Time, as []policy.Avoidance) {
	if g.avoid == nil {
		g.avoid = map[string]avoidance{}
	}
	for _, a := range as {
		prev, ok := g.avoid[a.Owner.UID]
		from := t
		if ok && t.Before(prev.a.Until) {
			from = prev.from
		}
		g.avoid[a.Owner.UID] = avoidance{from: from, a: a}
	}
}

// keptBy returns the avoidance that keeps the pod off the node: its owner's, in force when the pod
// appeared.
func (g *agent) keptBy(p PodInfo) (avoidance, bool) {
	o := podWorkload(p.Candidate)
	if !policy.Avoidable(o) {
		return avoidance{}, false
	}
	a, ok := g.avoid[o.UID]
	return a, ok && !p.Since.Before(a.from) && p.Since.Before(a.a.Until)
}

// admit decides, at the first tick at or after each pod's appearance, whether the pod comes onto the
// node in this run: a pod whose owner the agent's avoidance keeps away never does.
func (r *run) admit(t time.Time) {
	for _, p := range r.node.pods {
		uid := p.Candidate.UID
		if t.Before(p.Since) || r.node.admitted[uid] {
			continue
		}
		r.node.admitted[uid] = true
		if r.agent == nil {
			continue
		}
		if a, ok := r.agent.keptBy(p); ok {
			r.node.kept[uid] = true
			r.add(Event{At: p.Since, Actor: ActorAgent, Kind: KindKept, Subject: p.Key(), Detail: keptWords(a.a, r.start)})
		}
	}
}

// keptWords says why a pod is kept off the node.
func keptWords(a policy.Avoidance, start time.Time) string {
	why := "the cooldown after an eviction"
	if a.Loop {
		why = "escalated: an eviction loop"
	}
	return fmt.Sprintf("not scheduled here: %s avoids the node until %s (%s; the admission policy adds a required node "+
		"anti-affinity); the simulation does not place it elsewhere", a.Owner, FormatOffset(a.Until.Sub(start)), why)
}

// AvoidanceInfo is what an agent's eviction does to its owner's avoidance of the node.
type AvoidanceInfo struct {
	// Owner is kind/namespace/name.
	Owner string    `json:"owner"`
	Until time.Time `json:"until"`
	// UntilOffset is Until − the timeline's start.
	UntilOffset Duration `json:"untilOffset"`
	// Loop is set when the eviction closes an eviction loop: the avoidance is escalated.
	Loop *LoopInfo `json:"loop,omitempty"`
}

// LoopInfo describes an eviction loop: the owner's evictions on the node within the window, this one
// included, and the time since the previous one.
type LoopInfo struct {
	Evictions int      `json:"evictions"`
	Since     Duration `json:"sincePrevious"`
}

// avoidanceInfo describes the avoidance of an agent's eviction (nil: none).
func avoidanceInfo(ev AgentEviction, start time.Time) *AvoidanceInfo {
	if ev.Avoidance.Until.IsZero() {
		return nil
	}
	info := &AvoidanceInfo{Owner: ev.Avoidance.Owner.String(), Until: ev.Avoidance.Until.UTC(),
		UntilOffset: Duration(ev.Avoidance.Until.Sub(start))}
	if ev.Loop != nil {
		info.Loop = &LoopInfo{Evictions: ev.Loop.Evictions, Since: Duration(ev.Loop.Since)}
	}
	return info
}

// words is the timeline's detail of the avoidance of pod's eviction.
func (a *AvoidanceInfo) words(pod string) string {
	until := FormatOffset(time.Duration(a.UntilOffset))
	if a.Loop == nil {
		return fmt.Sprintf("avoidance of %s until %s: its new pods are kept off the node (loopBreaker.cooldown)", a.Owner, until)
	}
	return fmt.Sprintf("eviction loop: %s is a replacement created after the previous eviction of %s (%s earlier), %d evictions "+
		"here within loopBreaker.window: avoidance of %s until %s (loopBreaker.loopCooldown)", pod, a.Owner,
		time.Duration(a.Loop.Since).Round(100*time.Millisecond), a.Loop.Evictions, a.Owner, until)
}
