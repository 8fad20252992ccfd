package agent

import (
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// PolicyConfig returns the policy settings of the configuration: what pressure-agent's policy.Step runs
// with, and what kubectl pressure explain --agent-config predicts with. Settings the file does not
// carry keep policy.DefaultConfig's values; the trend kill is on only with eviction.allowCgroupKill.
func (c *Config) PolicyConfig() policy.Config {
	out := policy.DefaultConfig()
	out.Policy = policy.Name(c.Policy)
	out.Headroom = policy.Headroom{}
	for _, h := range c.Headroom {
		v := threshold.Value{Percentage: float32(h.Percentage)}
		if h.Quantity != nil {
			q := h.Quantity.DeepCopy()
			v = threshold.Value{Quantity: &q}
		}
		out.Headroom[signal.Signal(h.Signal)] = v
	}
	out.MaxEvictionsPerMinute = c.MaxEvictionsPerMinute
	out.EvictionLead = c.EvictionLead
	if c.Ladder.AllowCgroupKill {
		out.KillLead = policy.DefaultKillLead
	}
	if c.LoopBreaker.Enabled {
		out.TaintHysteresis = c.LoopBreaker.TaintHysteresis
	}
	out.Reclaim.KubeletHorizon = c.Reclaim.KubeletHorizon
	out.Reclaim.Action = c.Reclaim.Action
	out.DryRun = c.DryRun
	return out
}

// LadderConfig returns the escalation ladder's settings (policy.Escalation): what actuate.Ladder carries
// out in pressure-agent and what kubectl pressure simulate's agent forecasts with. The avoidance settle
// wait is the policy's fixed policy.DefaultAvoidanceSettle.
func (c *Config) LadderConfig() policy.LadderConfig {
	return policy.LadderConfig{PDBFallbackWait: c.Ladder.PDBFallbackWait, AllowDelete: c.Ladder.AllowDelete,
		AllowCgroupKill: c.Ladder.AllowCgroupKill, DryRun: c.DryRun, AvoidanceSettle: policy.DefaultAvoidanceSettle}
}

// LoopConfig returns the loop rules' settings (policy.History): the loop breaker's windows and the
// policy's in-flight rule, which the ledger's pruning follows. pressure-agent's ledger and kubectl
// pressure explain's foresight of an eviction's avoidance use them.
func (c *Config) LoopConfig() policy.LoopConfig {
	lb := c.LoopBreaker
	return policy.LoopConfig{Window: lb.Window, Cooldown: lb.Cooldown, LoopEvictions: lb.LoopEvictions,
		LoopCooldown: lb.LoopCooldown, InFlight: c.PolicyConfig().InFlight()}
}
