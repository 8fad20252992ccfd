package agent

import (
	"os"

	"github.com/spf13/pflag"

	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/config/cmdline"
	"github.com/kube-pressure/pressure/internal/source/podfs"
)

// Overrides are pressure-agent's command-line flags. The caller owns the FlagSet (flags live in package
// main); AddFlags only registers on it. A flag the user sets overrides the configuration file.
type Overrides struct {
	cmdline.Flags
	NodeName      string
	KubeletConfig string
}

// AddFlags registers the common daemon flags and the agent's own on fs.
func (o *Overrides) AddFlags(fs *pflag.FlagSet) {
	o.Flags.AddFlags(fs, cmdline.Usage{
		Config: "path of an " + agentcfg.Kind + " file (" + agentcfg.APIVersion + "); see docs/agent-config.md",
		DryRun: "decide and report (\"would evict\" events), evict and taint nothing",
	})
	fs.StringVar(&o.NodeName, "node-name", "", "name of this node (default: the file's nodeName, else $NODE_NAME)")
	fs.StringVar(&o.KubeletConfig, "kubelet-config", "", "the node's KubeletConfiguration file; empty reads the kubelet's /configz through the API server")
}

// Resolve loads --config (if any), applies the flags the user set, takes the node name from
// $NODE_NAME when neither gives one, then defaults, validates (every problem at once) and converts.
func (o *Overrides) Resolve(fs *pflag.FlagSet) (Config, error) {
	c := &agentcfg.AgentConfiguration{}
	if o.ConfigFile != "" {
		var err error
		if c, err = agentcfg.LoadFile(o.ConfigFile); err != nil {
			return Config{}, err
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
	cfg, err := agentcfg.Complete(c, name)
	if err != nil {
		return Config{}, err
	}
	return FromConfig(cfg), nil
}

// FromConfig maps the validated file configuration onto the agent's runtime Config.
func FromConfig(c *agentcfg.Config) Config {
	out := DefaultConfig(c.NodeName)
	s := &out.Settings
	s.Config = c.PolicyConfig()
	s.SyncPeriod, s.PodStatsMaxAge = c.SyncPeriod, c.PodStatsMaxAge
	out.APITimeout, out.KubeletConfigRefresh = c.APITimeout, c.KubeletConfigRefresh
	n := c.Notifiers
	out.Notifiers = Notifiers{Memcg: n.Memcg, MemoryEvents: n.Memcg, PSI: n.PSI, PSIWindow: n.PSIWindow,
		PollInterval: n.PollInterval, PollDelta: DefaultNotifiers.PollDelta,
		PollMaxInterval: n.PollMaxInterval, PollRampRate: n.PollRampRate}
	out.Kubeconfig, out.KubeletConfigFile = c.Kubeconfig, c.KubeletConfigFile
	out.MetricsAddr, out.HealthAddr = c.MetricsBindAddress, c.HealthProbeBindAddress
	out.CgroupRoot, out.ProcRoot = c.Paths.CgroupRoot, c.Paths.ProcRoot
	out.NodefsPath, out.ImagefsPath, out.PodLogsDir = c.Paths.KubeletRootDir, c.Paths.ImageFsDir, c.Paths.PodLogsDir
	out.PodsDir = c.Paths.KubeletPodsDir
	out.PodDiskWalk = podfs.Limits{MaxEntries: c.Paths.PodDiskWalkMaxEntries, MaxDuration: c.Paths.PodDiskWalkTimeout}
	out.Ladder.PDBFallbackWait, out.Ladder.AllowDelete = c.Ladder.PDBFallbackWait, c.Ladder.AllowDelete
	out.Ladder.AllowCgroupKill, out.Ladder.DryRun = c.Ladder.AllowCgroupKill, c.DryRun
	lb := c.LoopBreaker
	out.Ledger.Window, out.Ledger.Cooldown = lb.Window, lb.Cooldown
	out.Ledger.LoopEvictions, out.Ledger.LoopCooldown = lb.LoopEvictions, lb.LoopCooldown
	out.LoopBreaker, out.TaintKey = lb.Enabled, lb.TaintKey
	out.AvoidanceNamespace, out.AvoidancePrefix = lb.AvoidanceNamespace, lb.AvoidanceNamePrefix
	return out
}
