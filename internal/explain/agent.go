package explain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// defaultAgentSource names the settings used without Input.Agent.
const defaultAgentSource = "pressure-agent's defaults (no --agent-config given)"

// agentAnswer runs pressure-agent's policy (policy.Step from a fresh state, "if the pressure
// persisted") on the same snapshot and pods as the kubelet's prediction. kubelet is the kubelet's
// configuration before the containerfs derivation (Step derives it from the snapshot's layout); derived
// is the same after it, as the kubelet's prediction used it.
func agentAnswer(in Input, kubelet, derived threshold.Config, now time.Time, k Kubelet) *Pressure {
	settings := AgentSettings{Config: policy.DefaultConfig(), Source: defaultAgentSource}
	if in.Agent != nil {
		settings = *in.Agent
	}
	pods := make([]policy.Pod, 0, len(in.Candidates)+len(in.TerminalPods))
	for _, c := range in.Candidates {
		pods = append(pods, policy.Pod{Candidate: c, DeletionTimestamp: in.DeletionTimestamps[c.UID]})
	}
	pods = append(pods, in.TerminalPods...)
	pin, unknown := policy.NewInput(policy.Read{Now: now, Config: settings.Config, Kubelet: kubelet, KubeletSemantics: in.Semantics,
		Snapshot: in.Snapshot, Pods: pods, Ledger: in.Ledger, Reclaimable: in.Reclaimable, Persisting: true})
	_, plan := policy.Step(policy.State{}, pin)
	ps := &Pressure{Settings: settings.Source, Policy: string(plan.Policy), ThresholdsMet: []string{}, NodeConditions: []string{},
		Victims: []AgentVictim{}, Differences: []string{}}
	ps.Reclaim = agentReclaim(plan.Reclaim)
	ps.ReclaimActions = agentReclaimActions(plan)
	ps.Thresholds = agentThresholds(derived, plan.Thresholds, settings.Config, reclaimObservations(in.Snapshot.Observations, plan.Reclaim),
		plan.Headroom)
	for _, sp := range plan.Pressure {
		ps.ThresholdsMet = append(ps.ThresholdsMet, string(sp.Signal))
	}
	for _, c := range plan.Conditions {
		ps.NodeConditions = append(ps.NodeConditions, string(c))
	}
	sort.Strings(ps.NodeConditions)
	if len(plan.Evictions) > 0 {
		ps.ActedOn = plan.Thresholds.Thresholds[plan.Evictions[0].Threshold].String()
	}
	if t := plan.Target; t != nil {
		u := unitOfSignal(t.Signal)
		ps.Target = &AgentTarget{Signal: string(t.Signal), Available: exact(t.Available, u), Goal: exact(t.Goal, u), GoalWhy: t.GoalWhy,
			Need: exact(t.Need, u), MaxPods: t.Max, sig: t.Signal, available: t.Available, goal: t.Goal, need: t.Need, growth: t.Growth}
		if t.Growth > 0 {
			ps.Target.Growth = exact(t.Growth, u) + "/s"
		}
	}
	for _, c := range plan.Credits {
		ac := AgentCredit{Pod: c.Pod.String(), Memory: exact(c.Memory, unitBytes), Why: c.Why, memory: c.Memory}
		if c.PIDs > 0 {
			ac.Threads = exact(c.PIDs, unitCount)
		}
		ps.Credits = append(ps.Credits, ac)
	}
	for _, e := range plan.Evictions {
		ps.Victims = append(ps.Victims, AgentVictim{Pod: e.Ref().String(), UID: e.UID, Rank: e.Rank, Frees: frees(e.Signal, e.Release),
			GracePeriodSeconds: e.Grace.Effective, Why: e.Why, release: e.Release, hard: e.Hard})
	}
	if plan.Target != nil {
		for _, w := range plan.Walk {
			ap := AgentPod{Pod: w.Pod.String(), Rank: w.Rank, Frees: frees(plan.Target.Signal, w.Release), Action: "skip",
				Reason: w.Skip, release: w.Release}
			if w.Taken {
				ap.Action, ap.Reason = "evict", ""
			}
			ps.Walk = append(ps.Walk, ap)
		}
	}
	ps.Differences = append(reclaimDifferences(ps.Reclaim, ps.Thresholds), differences(ps, k, settings.Config)...)
	escalate(ps, in, settings.Config.PDBRetry, now)
	ps.Notes = agentNotes(plan, ps, in.Reclaimable != nil)
	for _, u := range unknown {
		ps.Notes = append(ps.Notes, "not known: "+u)
	}
	if in.Ladder == nil && len(ps.Victims) > 0 {
		ps.Notes = append(ps.Notes, "not known: the agent's escalation settings (what it does when a PodDisruptionBudget refuses)")
	}
	return ps
}

func frees(sig signal.Signal, r policy.Release) string {
	if !r.Known {
		return ""
	}
	return exact(r.Amount, unitOfSignal(sig))
}

// agentThresholds pairs every configured kubelet threshold with the agent's (same order).
func agentThresholds(kubelet, ours threshold.Config, cfg policy.Config, obs map[signal.Signal]signal.Observation,
	notes []policy.HeadroomNote) []AgentThreshold {
	withheld := map[int]string{}
	for _, n := range notes {
		if n.Withheld != "" {
			withheld[int(n.Threshold)] = n.Withheld
		}
	}
	out := []AgentThreshold{}
	for i, kt := range kubelet.Thresholds {
		if kt.Inert() || i >= len(ours.Thresholds) {
			continue
		}
		t := ours.Thresholds[i]
		u := unitOfSignal(t.Signal)
		at := AgentThreshold{Signal: string(t.Signal), Kubelet: kt.String(), Hard: t.IsHard(), sig: t.Signal}
		if h, ok := cfg.Headroom[t.Signal]; ok && t.IsHard() && cfg.Policy != policy.Kubelet {
			at.Headroom = h.String()
		}
		if w, ok := withheld[i]; ok {
			at.Headroom, at.HeadroomWithheld = "0", w
		}
		o, ok := obs[t.Signal]
		if !ok {
			out = append(out, at)
			continue
		}
		at.Known = true
		at.kubeletV, at.resolvedV = kt.Value.Resolve(o.Capacity), t.Value.Resolve(o.Capacity)
		at.KubeletResolved, at.Resolved = exact(at.kubeletV, u), exact(at.resolvedV, u)
		if t.MinReclaim != nil {
			at.reclaimV = t.MinReclaim.Resolve(o.Capacity)
			at.MinReclaim = exact(at.reclaimV, u)
		}
		at.FiresAbove = exact(max(0, o.Capacity-at.resolvedV), u)
		at.Met = threshold.Met(t, o, false)
		out = append(out, at)
	}
	return out
}

// differences says where the agent's answer differs from the kubelet's, and why.
func differences(ps *Pressure, k Kubelet, cfg policy.Config) []string {
	var out []string
	if cfg.Policy == policy.Kubelet {
		out = append(out, fmt.Sprintf("policy kubelet: pressure-agent acts at the kubelet's thresholds, one pod per sync, as the kubelet; "+
			"it also bounds its requests to %d a minute", cfg.MaxEvictionsPerMinute))
	} else if raised := raisedWords(ps.Thresholds); raised != "" {
		out = append(out, "pressure-agent acts earlier: its hard thresholds are the kubelet's raised by the headroom ("+raised+")")
	}
	kubeletMet := len(k.ThresholdsMet) > 0
	switch {
	case len(ps.ThresholdsMet) > 0 && !kubeletMet:
		out = append(out, "pressure-agent's thresholds are met and the kubelet's are not: the agent evicts, the kubelet would not yet")
	case len(ps.ThresholdsMet) == 0 && kubeletMet:
		out = append(out, "the kubelet's thresholds are met and pressure-agent's are not (its pods in flight are credited)")
	}
	if local := localStorageVictims(k); len(local) > 0 {
		out = append(out, fmt.Sprintf("the kubelet would first evict the pods over a local ephemeral-storage limit (%s); "+
			"pressure-agent leaves those to the kubelet (it reads no per-pod disk usage)", strings.Join(local, ", ")))
	}
	first, ok := firstKubeletVictim(k)
	switch {
	case !ok && len(ps.Victims) > 0:
		out = append(out, fmt.Sprintf("pressure-agent would evict %s; the kubelet's threshold ranking would evict nothing", victimNames(ps.Victims)))
	case ok && len(ps.Victims) == 0 && len(ps.ThresholdsMet) > 0:
		out = append(out, fmt.Sprintf("the kubelet would evict %s; pressure-agent evicts nothing: %s", first.Pod, skipOf(ps, first.Pod)))
	case ok && len(ps.Victims) > 0 && ps.Victims[0].Pod != first.Pod:
		out = append(out, fmt.Sprintf("the kubelet would evict %s first; pressure-agent skips it (%s) and evicts %s", first.Pod,
			skipOf(ps, first.Pod), victimNames(ps.Victims)))
	case ok && len(ps.Victims) > 1:
		out = append(out, fmt.Sprintf("the kubelet evicts one pod per cycle (%s) and ranks again; pressure-agent evicts %s at once, "+
			"enough to reach its threshold plus minimum reclaim", first.Pod, victimNames(ps.Victims)))
	}
	if len(ps.Credits) > 0 {
		out = append(out, fmt.Sprintf("terminating pods: the kubelet ranks them and waits for them; pressure-agent does not rank them and "+
			"counts what they used as available again (%d pods)", len(ps.Credits)))
	}
	return out
}

func raisedWords(ts []AgentThreshold) string {
	var parts []string
	for _, t := range ts {
		if t.Headroom == "" || !t.Known || t.resolvedV == t.kubeletV {
			continue
		}
		u := unitOfSignal(t.sig)
		parts = append(parts, fmt.Sprintf("%s %s + %s = %s", t.Signal, human(t.kubeletV, u), t.Headroom, human(t.resolvedV, u)))
	}
	return strings.Join(parts, "; ")
}

// firstKubeletVictim is the kubelet's first victim of the threshold ranking (the local-storage group
// aside).
func firstKubeletVictim(k Kubelet) (Victim, bool) {
	for _, v := range k.EvictionOrder {
		if !v.Critical && v.Path != PathLocalStorage {
			return v, true
		}
	}
	return Victim{}, false
}

// localStorageVictims names the kubelet's local-storage evictions.
func localStorageVictims(k Kubelet) []string {
	var out []string
	for _, v := range k.EvictionOrder {
		if v.Path == PathLocalStorage && !v.Critical {
			out = append(out, v.Pod)
		}
	}
	return out
}

func victimNames(vs []AgentVictim) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Pod
	}
	return strings.Join(names, ", ")
}

// skipOf returns why the agent did not take pod.
func skipOf(ps *Pressure, pod string) string {
	for _, w := range ps.Walk {
		if w.Pod == pod && w.Action == "skip" {
			return w.Reason
		}
	}
	for _, c := range ps.Credits {
		if c.Pod == pod {
			return "terminating, its usage is credited"
		}
	}
	return "not taken"
}

// agentNotes lists the assumptions behind the agent's prediction.
func agentNotes(plan policy.Plan, ps *Pressure, reclaimKnown bool) []string {
	out := []string{"computed from the same stats as the kubelet's prediction; the running agent reads the node itself " +
		"(fresher cgroup stats; per-pod disk usage from its own walk of the pods' volumes and logs) and counts the pods whose " +
		"eviction it already requested as in flight"}
	if reclaimKnown {
		for _, e := range plan.Trace {
			if e.Kind == policy.KindReclaim && !signal.Signal(e.Subject).IsMemory() {
				out = append(out, "node-level reclaim for "+e.Subject+": "+e.Detail)
			}
		}
	}
	if len(ps.ThresholdsMet) == 0 {
		out = append(out, "no threshold of pressure-agent's is met: it would evict nothing")
	}
	for _, w := range plan.Warnings {
		out = append(out, "warning: "+w)
	}
	return out
}
