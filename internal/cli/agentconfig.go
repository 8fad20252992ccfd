package cli

import (
	corev1 "k8s.io/api/core/v1"

	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/explain"
	"github.com/kube-pressure/pressure/internal/policy"
)

// placeholderNode stands in for the nodeName an agent configuration file usually leaves to the
// DaemonSet (--node-name or $NODE_NAME): explain needs only the policy settings.
const placeholderNode = "explained-node"

// agentShell are the agent's settings outside its policy that explain shows: how it escalates an
// eviction and the ledger's avoidance windows.
type agentShell struct {
	ladder explain.AgentLadder
	ledger policy.LoopConfig
	// avoid is loopBreaker.enabled: the ladder avoids and detects loops.
	avoid bool
}

// loadAgentSettings reads pressure-agent's configuration file as the agent does (strict decoding,
// defaults, every problem at once naming the file, the field and the value) and returns its policy
// settings (nil without a file: explain names the agent's defaults) and its escalation and ledger
// settings (the defaults without a file).
func loadAgentSettings(path string) (*explain.AgentSettings, agentShell, error) {
	c := &agentcfg.AgentConfiguration{}
	origin := "pressure-agent's defaults"
	if path != "" {
		var err error
		if c, err = agentcfg.LoadFile(path); err != nil {
			return nil, agentShell{}, err
		}
		origin = path
	}
	c.APIVersion, c.Kind = agentcfg.APIVersion, agentcfg.Kind
	if c.NodeName == nil || *c.NodeName == "" {
		n := placeholderNode
		c.NodeName = &n
	}
	cfg, err := agentcfg.Complete(c, origin)
	if err != nil {
		return nil, agentShell{}, err
	}
	shell := agentShell{ladder: explain.AgentLadder{AllowDelete: cfg.Ladder.AllowDelete, PDBFallbackWait: cfg.Ladder.PDBFallbackWait,
		AllowCgroupKill: cfg.Ladder.AllowCgroupKill},
		ledger: cfg.LoopConfig(), avoid: cfg.LoopBreaker.Enabled}
	if path == "" {
		return nil, shell, nil
	}
	return &explain.AgentSettings{Config: cfg.PolicyConfig(), Source: "--agent-config " + path}, shell, nil
}

// useAgentShell sets in's escalation settings and, when the node's ledger could be read, the
// foresight of each eviction's avoidance with the agent's ledger windows.
func useAgentShell(in *explain.Input, node *corev1.Node, pods []corev1.Pod, shell agentShell) {
	ladder := shell.ladder
	in.Ladder = &ladder
	if node != nil && shell.avoid {
		in.ForeseeAvoidance = foreseeAvoidance(node, pods, shell.ledger)
	}
}
