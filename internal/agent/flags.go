package agent

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
)

// Overrides are pressure-agent's command-line flags. The caller owns the FlagSet (flags live in package
// main); AddFlags only registers on it. A flag the user sets overrides the configuration file.
type Overrides struct {
	ConfigFile             string
	Kubeconfig             string
	NodeName               string
	KubeletConfig          string
	DryRun                 bool
	MetricsBindAddress     string
	HealthProbeBindAddress string
	Version                bool
}

// AddFlags registers the flags on fs.
func (o *Overrides) AddFlags(fs *pflag.FlagSet) {
	d := DefaultConfig("")
	fs.StringVar(&o.ConfigFile, "config", "", "path of an AgentConfiguration file")
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "path of a kubeconfig file; empty means in-cluster")
	fs.StringVar(&o.NodeName, "node-name", "", "name of this node (default $NODE_NAME)")
	fs.StringVar(&o.KubeletConfig, "kubelet-config", "", "the node's KubeletConfiguration file; empty reads the kubelet's /configz through the API server")
	fs.BoolVar(&o.DryRun, "dry-run", false, "decide and report (\"would evict\" events), evict and taint nothing")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", d.MetricsAddr, "address of /metrics (\"0\" disables)")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", d.HealthAddr, "address of /healthz and /readyz (\"0\" disables)")
	fs.BoolVar(&o.Version, "version", false, "print version, commit and Go version, then exit")
}

// Resolve loads --config (if any) onto the defaults, applies the flags the user set, and validates.
func (o *Overrides) Resolve(fs *pflag.FlagSet) (Config, error) {
	node := os.Getenv("NODE_NAME")
	cfg := DefaultConfig(node)
	if o.ConfigFile != "" {
		if err := loadConfigFile(o.ConfigFile, &cfg); err != nil {
			return Config{}, err
		}
	}
	set := func(flag string, f func()) {
		if fs.Changed(flag) {
			f()
		}
	}
	set("kubeconfig", func() { cfg.Kubeconfig = o.Kubeconfig })
	set("node-name", func() { cfg.Settings.Node = o.NodeName })
	set("kubelet-config", func() { cfg.KubeletConfigFile = o.KubeletConfig })
	set("dry-run", func() { cfg.Settings.DryRun = o.DryRun })
	set("metrics-bind-address", func() { cfg.MetricsAddr = o.MetricsBindAddress })
	set("health-probe-bind-address", func() { cfg.HealthAddr = o.HealthProbeBindAddress })
	cfg.Ladder.DryRun = cfg.Settings.DryRun
	if err := cfg.Validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// loadConfigFile is replaced by internal/config/agent when it lands.
func loadConfigFile(path string, cfg *Config) error {
	return fmt.Errorf("config file %s: AgentConfiguration files are not supported by this build yet", path)
}
