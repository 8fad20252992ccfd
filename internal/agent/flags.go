package agent

import (
	"github.com/spf13/pflag"

	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/source/podfs"
)

// Overrides are pressure-agent's command-line flags (agentcfg.Overrides: the caller owns the FlagSet,
// AddFlags only registers on it, a flag the user sets overrides the configuration file).
type Overrides struct {
	agentcfg.Overrides
}

// Resolve runs the configuration's one path (agentcfg.Overrides.Resolve: load, flags, defaults,
// validation, conversion) and maps the result onto the agent's runtime Config.
func (o *Overrides) Resolve(fs *pflag.FlagSet) (Config, error) {
	c, err := o.Overrides.Resolve(fs)
	if err != nil {
		return Config{}, err
	}
	return FromConfig(c), nil
}

// FromConfig maps the validated file configuration onto the agent's runtime Config. It writes no
// default of its own: every value comes from c (internal/config/agent defaulted it), except the shell's
// fixed settings the file does not carry (the poll's delta, the avoidance settle).
func FromConfig(c *agentcfg.Config) Config {
	n, lb, p, pc := c.Notifiers, c.LoopBreaker, c.Paths, c.PolicyConfig()
	return Config{
		Settings: Settings{Node: c.NodeName, SyncPeriod: c.SyncPeriod, PodStatsMaxAge: c.PodStatsMaxAge,
			Config: pc},
		Notifiers: Notifiers{Memcg: n.Memcg, MemoryEvents: n.Memcg, PSI: n.PSI, PSIWindow: n.PSIWindow,
			PollInterval: n.PollInterval, PollDelta: agentcfg.PollDelta,
			PollMaxInterval: n.PollMaxInterval, PollRampRate: n.PollRampRate},
		Kubeconfig: c.Kubeconfig, KubeletConfigFile: c.KubeletConfigFile,
		MetricsAddr: c.MetricsBindAddress, HealthAddr: c.HealthProbeBindAddress,
		CgroupRoot: p.CgroupRoot, ProcRoot: p.ProcRoot,
		NodefsPath: p.KubeletRootDir, ImagefsPath: p.ImageFsDir, PodLogsDir: p.PodLogsDir, PodsDir: p.KubeletPodsDir,
		PodDiskWalk: podfs.Limits{MaxEntries: p.PodDiskWalkMaxEntries, MaxDuration: p.PodDiskWalkTimeout},
		Ladder:      c.LadderConfig(),
		Ledger:      c.LoopConfig(),
		LoopBreaker: lb.Enabled, TaintKey: lb.TaintKey,
		AvoidanceNamespace: lb.AvoidanceNamespace, AvoidancePrefix: lb.AvoidanceNamePrefix,
		APITimeout: c.APITimeout, KubeletConfigRefresh: c.KubeletConfigRefresh,
	}
}
