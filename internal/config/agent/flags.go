package agent

import (
	"os"

	"github.com/spf13/pflag"

	"github.com/kube-pressure/pressure/internal/config/cmdline"
)

// Overrides are pressure-agent's command-line flags: the daemons' common flags and the agent's own. The
// caller owns the FlagSet (flags live in package main); AddFlags only registers on it. A flag the user
// sets overrides the configuration file.
type Overrides struct {
	cmdline.Flags
	NodeName      string
	KubeletConfig string
}

// AddFlags registers the common daemon flags and the agent's own on fs.
func (o *Overrides) AddFlags(fs *pflag.FlagSet) {
	o.Flags.AddFlags(fs, cmdline.Usage{
		Config: "path of an " + Kind + " file (" + APIVersion + "); see docs/agent-config.md",
		DryRun: "decide and report (\"would evict\" events), evict and taint nothing",
	})
	fs.StringVar(&o.NodeName, "node-name", "", "name of this node (default: the file's nodeName, else $NODE_NAME)")
	fs.StringVar(&o.KubeletConfig, "kubelet-config", "", "the node's KubeletConfiguration file; empty reads the kubelet's /configz through the API server")
}

// Resolve is the agent's one configuration path: it loads --config (if any), applies the flags the user
// set, takes the node name from $NODE_NAME when neither gives one, then defaults, validates (every
// problem at once) and converts.
func (o *Overrides) Resolve(fs *pflag.FlagSet) (*Config, error) {
	c := &AgentConfiguration{}
	if o.ConfigFile != "" {
		var err error
		if c, err = LoadFile(o.ConfigFile); err != nil {
			return nil, err
		}
	}
	set := func(flag string, dst **string, v string) {
		if fs.Changed(flag) {
			*dst = &v
		}
	}
	set("kubeconfig", &c.Kubeconfig, o.Kubeconfig)
	set("node-name", &c.NodeName, o.NodeName)
	set("kubelet-config", &c.KubeletConfigFile, o.KubeletConfig)
	set("metrics-bind-address", &c.MetricsBindAddress, o.MetricsBindAddress)
	set("health-probe-bind-address", &c.HealthProbeBindAddress, o.HealthProbeBindAddress)
	if fs.Changed("dry-run") {
		c.DryRun = &o.DryRun
	}
	if n := os.Getenv("NODE_NAME"); c.NodeName == nil && n != "" {
		c.NodeName = &n
	}
	name := o.ConfigFile
	if name == "" {
		name = "flags"
	}
	return Complete(c, name)
}
