package cli

import (
	"fmt"

	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/sim"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// agentOptions sets up the run with pressure-agent: its configuration (the scenario's agent section,
// --agent-config, or the defaults; --set agent.FIELD applied), defaulted and validated as the agent
// does, drives policy.Step; kubelet is the kubelet's configuration before the containerfs derivation.
func (in *simInput) agentOptions(o *sim.Options, kubelet threshold.Config) error {
	c := in.agent
	origin := in.agentOrigin
	if c == nil {
		c, origin = &agentcfg.AgentConfiguration{}, "pressure-agent's defaults"
	}
	cc := *c // Complete fills in the defaults
	c = &cc
	c.APIVersion, c.Kind = agentcfg.APIVersion, agentcfg.Kind
	if c.NodeName == nil || *c.NodeName == "" {
		c.NodeName = &in.node
	}
	cfg, err := agentcfg.Complete(c, origin)
	if err != nil {
		return err
	}
	o.NewAgent = sim.PolicyAgent(cfg.PolicyConfig(), cfg.LadderConfig(), kubelet, o.KubeletSemantics, loopRules(cfg))
	n := cfg.Notifiers
	o.AgentTiming = sim.AgentTiming{SyncPeriod: cfg.SyncPeriod, PollInterval: n.PollInterval, PollDelta: agentcfg.PollDelta,
		PollMaxInterval: n.PollMaxInterval, PollRampRate: n.PollRampRate}
	o.AgentTaintKey = ""
	if cfg.LoopBreaker.Enabled {
		o.AgentTaintKey = cfg.LoopBreaker.TaintKey // defaulted and validated: never empty
	}
	api := "the simulated Eviction API accepts every request"
	if in.scenario != nil && in.scenario.HasPDB() {
		ld := cfg.LadderConfig()
		api = fmt.Sprintf("the simulated Eviction API accepts every request but for the pods a PodDisruptionBudget protects "+
			"(pods[].pdb), which it refuses: the agent's escalation ladder follows (eviction.allowDelete %t, eviction.pdbFallbackWait %s)",
			ld.AllowDelete, ld.PDBFallbackWait)
	}
	in.notes = append(in.notes, "pressure-agent: "+origin+"; "+api)
	if in.agentView != "" {
		in.notes = append(in.notes, in.agentView)
	}
	if l := loopRules(cfg); l != nil && in.scenario != nil && in.scenario.HasOwners() {
		in.notes = append(in.notes, fmt.Sprintf("pressure-agent's loop breaker: each eviction of a pod with an owner "+
			"(pods[].owner) makes the owner's new pods avoid the node for loopBreaker.cooldown %s, loopBreaker.loopCooldown %s "+
			"after an eviction loop (a replacement evicted again, %d evictions within loopBreaker.window %s); a pod of an "+
			"avoided owner that appears meanwhile is kept off the node", l.Cooldown, l.LoopCooldown, l.LoopEvictions, l.Window))
	}
	for _, u := range sim.PolicyAgentUnknowns(cfg.PolicyConfig(), kubelet) {
		in.notes = append(in.notes, "pressure-agent: not known: "+u)
	}

	return nil
}

// loopRules are the agent's loop rules when its loop breaker is on (nil: off, the agent avoids nothing).
func loopRules(cfg *agentcfg.Config) *policy.LoopConfig {
	if !cfg.LoopBreaker.Enabled {
		return nil
	}
	l := cfg.LoopConfig()
	return &l
}
