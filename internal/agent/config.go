package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/actuate"
	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/source/podfs"
)

// Config is everything Run needs, typed and defaulted (internal/config/agent converts the
// AgentConfiguration file and flags into it).
type Config struct {
	Settings  Settings
	Notifiers Notifiers
	// Kubeconfig is a kubeconfig path; empty means in-cluster.
	Kubeconfig string
	// KubeletConfigFile is the node's KubeletConfiguration; empty means the kubelet's /configz through
	// the API server.
	KubeletConfigFile string
	// MetricsAddr serves /metrics, HealthAddr /healthz and /readyz; "" or "0" disables a server.
	MetricsAddr, HealthAddr string
	// CgroupRoot and ProcRoot are where the host's cgroup and proc filesystems are (default
	// /sys/fs/cgroup and /proc; /host/... in a DaemonSet).
	CgroupRoot, ProcRoot string
	// NodefsPath (the kubelet root dir) and ImagefsPath (the runtime root) are statfs'ed for the disk
	// signals; empty leaves those signals out.
	NodefsPath, ImagefsPath string
	// PodLogsDir is the kubelet's podLogsDir: the pods' logs are measured there for the per-pod disk
	// usage (with their local volumes under NodefsPath); empty leaves the logs unmeasured.
	PodLogsDir string
	// PodsDir is the kubelet's pods directory, where each pod's local volumes are measured; empty means
	// <NodefsPath>/pods.
	PodsDir string
	// PodDiskWalk bounds each pod's disk walk (zero fields: podfs's defaults).
	PodDiskWalk podfs.Limits
	Ladder      actuate.LadderConfig
	Ledger      policy.LoopConfig
	// LoopBreaker enables the ledger's avoidances and loop detection and the pressure taint.
	LoopBreaker bool
	// TaintKey is the pressure taint's key.
	TaintKey string
	// AvoidanceNamespace is where the node's avoidance ConfigMap is written; "" writes none.
	AvoidanceNamespace string
	// AvoidancePrefix is the ConfigMap's name prefix.
	AvoidancePrefix string
	// APITimeout bounds every API request that is not a watch, each on its own (agentcfg.DefaultAPITimeout);
	// watches are never cut.
	APITimeout time.Duration
	// KubeletConfigRefresh is how often the kubelet's configuration is read again (0: only at start).
	KubeletConfigRefresh time.Duration
}

// DefaultConfig returns the defaults for node: those of an AgentConfiguration file that sets only
// nodeName, as internal/config/agent defaults and converts it (the cgroup-kill rungs are off, as
// eviction.allowCgroupKill). No default is written here.
func DefaultConfig(node string) Config { return FromConfig(agentcfg.Defaults(node)) }

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) { errs = append(errs, fmt.Errorf("%s %v: %s", field, v, why)) }
	s := c.Settings
	if s.Node == "" {
		bad("nodeName", `""`, "required (--node-name or the NODE_NAME environment variable)")
	}
	if s.SyncPeriod <= 0 {
		bad("syncPeriod", s.SyncPeriod, "must be positive")
	}
	if err := s.Config.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Notifiers.PollInterval < 0 || c.Notifiers.PollDelta < 0 {
		bad("notifiers.poll", fmt.Sprintf("%s/%d", c.Notifiers.PollInterval, c.Notifiers.PollDelta), "must be >= 0")
	}
	if c.CgroupRoot == "" || c.ProcRoot == "" {
		bad("cgroupRoot/procRoot", fmt.Sprintf("%q/%q", c.CgroupRoot, c.ProcRoot), "required")
	}
	if c.APITimeout < 0 {
		bad("apiTimeout", c.APITimeout, "must be >= 0")
	}
	if c.Ladder.PDBFallbackWait < 0 {
		bad("pdbFallbackWait", c.Ladder.PDBFallbackWait, "must be >= 0")
	}
	if c.Ladder.DryRun != s.DryRun {
		bad("dryRun", s.DryRun, "the ladder and the loop must agree")
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid agent configuration: %w", err)
	}
	return nil
}
