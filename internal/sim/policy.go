package sim

import (
	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// PolicyAgent returns pressure-agent's policy, policy.Step, as an Agent: one Step per sync from the
// State of the previous one, with the kubelet's configuration kubelet (before the containerfs
// derivation, which Step makes). The simulated Eviction API accepts every eviction at once and the
// kills succeed: each is reported to the next Step as its Outcome. A planned reclaim (the reclaim rung)
// frees the pod's page cache (ModelPod.Cache) and is reported as having freed what it asked.
// sem is the kubelet release the agent's kubelet policy follows (zero: the pinned 1.36).
func PolicyAgent(cfg policy.Config, kubelet threshold.Config, sem decision.Semantics) func() Agent {
	return func() Agent { return &policyAgent{cfg: cfg, kubelet: kubelet, sem: sem} }
}

type policyAgent struct {
	cfg      policy.Config
	kubelet  threshold.Config
	sem      decision.Semantics
	st       policy.State
	outcomes []policy.Outcome
	reclaims []policy.ReclaimOutcome
}

// Step implements Agent.
func (a *policyAgent) Step(in AgentInput) AgentPlan {
	pods := make([]policy.Pod, 0, len(in.Candidates))
	for _, c := range in.Candidates {
		pods = append(pods, policy.Pod{Candidate: c, DeletionTimestamp: in.Deletion[c.UID]})
	}
	next, plan := policy.Step(a.st, policy.Input{Now: in.Now, Config: a.cfg, Kubelet: a.kubelet, KubeletSemantics: a.sem,
		Snapshot: in.Snapshot, Pods: pods, Outcomes: a.outcomes, Reclaims: a.reclaims})
	a.st, a.outcomes, a.reclaims = next, nil, nil
	out := AgentPlan{Taint: plan.Taint.Want, Thresholds: map[signal.Signal]int64{}}
	for _, w := range plan.Watch {
		out.Thresholds[w.Signal] = w.Value
	}
	for _, e := range plan.Evictions {
		ae := AgentEviction{UID: e.UID, Signal: e.Signal, Why: e.Why, Rank: e.Rank,
			Ranked: len(plan.Walk), DecidedBy: string(e.DecidedBy), GraceSeconds: e.Grace.Effective, Message: e.Message}
		if o, ok := in.Snapshot.Observations[e.Signal]; ok && int(e.Threshold) >= 0 && int(e.Threshold) < len(plan.Thresholds.Thresholds) {
			ae.Threshold = thresholdText(plan.Thresholds.Thresholds[e.Threshold], o)
		}
		out.Evictions = append(out.Evictions, ae)
		a.outcomes = append(a.outcomes, policy.Outcome{UID: e.UID, Action: policy.ActionEvict, Result: policy.ResultEvicted,
			API: policy.ContactAnswered, At: in.Now})
	}
	for _, q := range plan.Reclaims {
		if q.Pod.UID == "" {
			continue // the pods cgroup: the model has no cache outside its pods' own
		}
		out.Reclaims = append(out.Reclaims, AgentReclaim{UID: q.Pod.UID, Bytes: q.Bytes})
		a.reclaims = append(a.reclaims, policy.ReclaimOutcome{UID: q.Pod.UID, Freed: q.Bytes, At: in.Now})
	}
	for _, k := range plan.Kills {
		out.Kills = append(out.Kills, k.Pod.UID)
		a.outcomes = append(a.outcomes, policy.Outcome{UID: k.Pod.UID, Action: policy.ActionKill, Result: policy.ResultKilled,
			At: in.Now})
	}
	return out
}
