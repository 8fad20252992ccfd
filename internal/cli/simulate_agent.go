package cli

import (
	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/sim"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// agentPollDelta is the agent's poll wake-up on a change of the memory signals (agent.DefaultNotifiers;
// not part of the configuration file).
const agentPollDelta = 32 << 20

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
	o.NewAgent = sim.PolicyAgent(cfg.PolicyConfig(), kubelet, o.KubeletSemantics)
	n := cfg.Notifiers
	o.AgentTiming = sim.AgentTiming{SyncPeriod: cfg.SyncPeriod, PollInterval: n.PollInterval, PollDelta: agentPollDelta,
		PollMaxInterval: n.PollMaxInterval, PollRampRate: n.PollRampRate}
	o.AgentTaintKey = ""
	if cfg.LoopBreaker.Enabled {
		o.AgentTaintKey = cfg.LoopBreaker.TaintKey
		if o.AgentTaintKey == "" {
			o.AgentTaintKey = loopbreaker.TaintKey
		}
	}
	in.notes = append(in.notes, "pressure-agent: "+origin+"; the simulated Eviction API accepts every request")
	return nil
}
