package sim

import (
	"fmt"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// PolicyAgent returns pressure-agent's policy, policy.Step, as an Agent: one Step per sync from the
// State of the previous one, with the kubelet's configuration kubelet (before the containerfs
// derivation, which Step makes). Each planned eviction goes through the agent's escalation ladder
// (policy.Foresee with ladder, the same policy.Escalation actuate.Ladder carries out) against the
// simulated API: the Eviction API accepts at once, except for a pod a PodDisruptionBudget protects
// (AgentInput.PDB), which it refuses; a DELETE is accepted. So a hard eviction of a protected pod is
// a DELETE after the fallback wait (eviction.allowDelete), a soft one is refused and paused
// (pdbRetry). The kills succeed. Each action is reported to the next Step as its Outcome. A planned reclaim (the reclaim rung)
// frees the pod's page cache (ModelPod.Cache) and is reported as having freed what it asked.
// sem is the kubelet release the agent's kubelet policy follows (zero: the pinned 1.37). loop, when not
// nil (the agent's loop breaker is on), is the agent's loop rules: the agent keeps a policy.History and
// each eviction it carries out of a pod with an Avoidable owner goes through the ladder's avoidance
// rules (AvoidBefore before it, Record after it; Restore when a PodDisruptionBudget stopped it), so the
// plan says which avoidance of the node it starts or extends and which eviction loop it closes.
func PolicyAgent(cfg policy.Config, ladder policy.LadderConfig, kubelet threshold.Config, sem decision.Semantics,
	loop *policy.LoopConfig) func() Agent {
	ladder.DryRun = false // the simulation shows what the evictions would do
	return func() Agent {
		a := &policyAgent{cfg: cfg, ladder: ladder, kubelet: kubelet, sem: sem}
		if loop != nil {
			a.history = policy.NewHistory(*loop)
		}
		return a
	}
}

type policyAgent struct {
	cfg      policy.Config
	ladder   policy.LadderConfig
	kubelet  threshold.Config
	sem      decision.Semantics
	st       policy.State
	outcomes []policy.Outcome
	reclaims []policy.ReclaimOutcome
	// ledger is the agent's ledger as its shell keeps it: the evictions carried out whose pod is still
	// listed (the agent's breaker settles an entry once its pod is gone).
	ledger policy.Ledger
	// history is the agent's memory of its evictions and the avoidances they started (nil: the loop
	// breaker is off).
	history *policy.History
}

// read is what the simulated agent's shell read at one sync, for policy.NewInput: the agent's own
// builder. The model has no disk and no node images: the reclaim estimate is unknown (nil).
func (a *policyAgent) read(in AgentInput) policy.Read {
	pods := make([]policy.Pod, 0, len(in.Candidates))
	listed := make(map[string]bool, len(in.Candidates))
	for _, c := range in.Candidates {
		pods = append(pods, policy.Pod{Candidate: c, DeletionTimestamp: in.Deletion[c.UID]})
		listed[c.UID] = true
	}
	keep := a.ledger.Evictions[:0:0]
	for _, e := range a.ledger.Evictions {
		if listed[e.UID] {
			keep = append(keep, e) // settled (and forgotten) once the pod is gone
		}
	}
	a.ledger.Evictions = keep
	ledger := policy.Ledger{Evictions: append([]policy.LedgerEviction(nil), keep...)}
	return policy.Read{Now: in.Now, Config: a.cfg, Kubelet: a.kubelet, KubeletSemantics: a.sem, Snapshot: in.Snapshot, Pods: pods,
		Ledger: &ledger, Outcomes: a.outcomes, Reclaims: a.reclaims}
}

// PolicyAgentUnknowns says what the simulated agent's input lacks next to the running agent's, in
// policy.NewInput's words (for simulate's notes).
func PolicyAgentUnknowns(cfg policy.Config, kubelet threshold.Config) []string {
	_, unknown := policy.NewInput((&policyAgent{cfg: cfg, kubelet: kubelet}).read(AgentInput{}))
	return unknown
}

// Step implements Agent.
func (a *policyAgent) Step(in AgentInput) AgentPlan {
	pin, _ := policy.NewInput(a.read(in))
	next, plan := policy.Step(a.st, pin)
	a.st, a.outcomes, a.reclaims = next, nil, nil
	out := AgentPlan{Taint: plan.Taint.Want, Thresholds: map[signal.Signal]int64{}}
	for _, w := range plan.Watch {
		out.Thresholds[w.Signal] = w.Value
	}
	for _, e := range plan.Evictions {
		out.Evictions = append(out.Evictions, a.escalate(in, plan, e))
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
		a.ledger.Evictions = append(a.ledger.Evictions, policy.LedgerEviction{UID: k.Pod.UID, At: in.Now, Rung: "cgroup-kill"})
	}
	if a.history != nil {
		out.Avoidances = a.history.Avoidances(in.Now)
	}
	return out
}

// escalate runs one planned eviction through the agent's ladder against the simulated API, with the
// ladder's avoidance rules, and records its outcome for the next Step. Its waits (the PodDisruptionBudget
// fallback) are its own: the agent carries a fallback out in the background (actuate.Ladder.EvictThen),
// and the plan's next evictions do not wait for it.
func (a *policyAgent) escalate(in AgentInput, plan policy.Plan, e policy.Eviction) AgentEviction {
	ae := AgentEviction{UID: e.UID, Signal: e.Signal, Why: e.Why, Rank: e.Rank,
		Ranked: len(plan.Walk), DecidedBy: string(e.DecidedBy), GraceSeconds: e.Grace.Effective, Message: e.Message}
	if o, ok := in.Snapshot.Observations[e.Signal]; ok && int(e.Threshold) >= 0 && int(e.Threshold) < len(plan.Thresholds.Thresholds) {
		ae.Threshold = thresholdText(plan.Thresholds.Thresholds[e.Threshold], o)
	}
	api := policy.APIAccepts
	if in.PDB[e.UID] {
		api = policy.PDBRefuses
	}
	owner := workloadOf(in.Candidates, e.UID)
	prev, avoided := a.avoidBefore(owner, in.Now)
	moves, esc := policy.Foresee(a.ladder, e.Hard, api)
	waited := policy.Waited(moves)
	last, at := esc.Last(), in.Now.Add(waited)
	ae.Rung, ae.After, ae.Refused = string(last.Rung), waited, !esc.Carried()
	if last.Rung == policy.RungDelete {
		ae.Why = joinNonEmpty("; ", ae.Why, fmt.Sprintf("a PodDisruptionBudget refused: DELETE after %s (eviction.allowDelete)",
			policy.Waited(moves)))
	}
	a.outcomes = append(a.outcomes, policy.Outcome{UID: e.UID, Action: policy.ActionEvict, Result: last.Result,
		API: policy.ContactAnswered, At: at})
	if esc.Carried() {
		a.ledger.Evictions = append(a.ledger.Evictions, policy.LedgerEviction{UID: e.UID, At: at, Rung: string(last.Rung)})
	}
	ae.Avoidance, ae.Loop = a.record(prev, avoided, esc.Carried(), policy.HistoryEntry{UID: e.UID, Namespace: e.Namespace,
		Name: e.Name, Owner: owner, Signal: string(e.Signal), Rung: string(last.Rung), At: at, Created: in.Created[e.UID]})
	return ae
}
