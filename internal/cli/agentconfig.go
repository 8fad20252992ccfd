package cli

import (
	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/explain"
)

// placeholderNode stands in for the nodeName an agent configuration file usually leaves to the
// DaemonSet (--node-name or $NODE_NAME): explain needs only the policy settings.
const placeholderNode = "explained-node"

// loadAgentSettings reads pressure-agent's configuration file as the agent does (strict decoding,
// defaults, every problem at once naming the file, the field and the value) and returns its policy
// settings; no file means the agent's defaults (nil: explain names them).
func loadAgentSettings(path string) (*explain.AgentSettings, error) {
	if path == "" {
		return nil, nil
	}
	c, err := agentcfg.LoadFile(path)
	if err != nil {
		return nil, err
	}
	if c.NodeName == nil || *c.NodeName == "" {
		n := placeholderNode
		c.NodeName = &n
	}
	cfg, err := agentcfg.Complete(c, path)
	if err != nil {
		return nil, err
	}
	return &explain.AgentSettings{Config: cfg.PolicyConfig(), Source: "--agent-config " + path}, nil
}
