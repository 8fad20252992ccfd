package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/signal"
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
	Ladder                  actuate.LadderConfig
	Ledger                  actuate.LedgerPolicy
	// LoopBreaker enables the ledger's avoidances and loop detection and the pressure taint.
	LoopBreaker bool
	// TaintKey is the pressure taint's key (default actuate.TaintKey).
	TaintKey string
	// TaintHysteresis is how long the pressure taint stays after the pressure ended.
	TaintHysteresis time.Duration
	// AvoidanceNamespace is where the node's avoidance ConfigMap is written; "" writes none.
	AvoidanceNamespace string
	// AvoidancePrefix is the ConfigMap's name prefix (actuate.DefaultAvoidancePrefix when empty).
	AvoidancePrefix string
	// APITimeout bounds every API request (default 10s).
	APITimeout time.Duration
}

// DefaultConfig returns the defaults for node, the same as an AgentConfiguration file that sets only
// nodeName (the cgroup-kill rungs are off, as eviction.allowCgroupKill).
func DefaultConfig(node string) Config {
	c := Config{
		Settings: DefaultSettings(node), Notifiers: DefaultNotifiers,
		MetricsAddr: ":8080", HealthAddr: ":8081", CgroupRoot: "/sys/fs/cgroup", ProcRoot: "/proc",
		NodefsPath: "/var/lib/kubelet",
		Ladder: actuate.LadderConfig{PDBFallbackWait: actuate.DefaultPDBFallbackWait, AllowDelete: true,
			AvoidanceSettle: actuate.DefaultAvoidanceSettle},
		Ledger: actuate.LedgerPolicy{}, AvoidancePrefix: actuate.DefaultAvoidancePrefix, LoopBreaker: true, TaintKey: actuate.TaintKey, TaintHysteresis: 10 * time.Second, APITimeout: 10 * time.Second,
	}
	c.Settings.KillLead = 0
	return c
}

// DefaultKillLead is the trend rung's horizon when eviction.allowCgroupKill is on: an OOM kill expected
// within it is closer than an eviction can complete (1 s grace plus the kubelet's reaction).
const DefaultKillLead = 2 * time.Second

// Validate reports every problem at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(field string, v any, why string) { errs = append(errs, fmt.Errorf("%s %v: %s", field, v, why)) }
	s := c.Settings
	if s.Node == "" {
		bad("nodeName", `""`, "required (--node-name or the NODE_NAME environment variable)")
	}
	if s.Policy != PolicyPressure && s.Policy != PolicyKubelet {
		bad("policy", fmt.Sprintf("%q", s.Policy), fmt.Sprintf("must be %q or %q", PolicyPressure, PolicyKubelet))
	}
	if s.SyncPeriod <= 0 {
		bad("syncPeriod", s.SyncPeriod, "must be positive")
	}
	for _, sig := range signal.All() {
		v, ok := s.Headroom[sig]
		if ok && (v.IsPercentage() && (v.Percentage < 0 || v.Percentage >= 1)) || (!v.IsPercentage() && v.Quantity.Sign() < 0) {
			bad("headroom."+string(sig), v.String(), "must be >= 0 and below 100%")
		}
	}
	if s.MaxEvictionsPerSync < 1 {
		bad("maxEvictionsPerSync", s.MaxEvictionsPerSync, "must be at least 1")
	}
	if s.MaxEvictionsPerMinute < 1 {
		bad("maxEvictionsPerMinute", s.MaxEvictionsPerMinute, "must be at least 1")
	}
	if s.KillLead < 0 || s.InFlightTTL <= 0 {
		bad("killLead/inFlightTTL", fmt.Sprintf("%s/%s", s.KillLead, s.InFlightTTL), "killLead must be >= 0 and inFlightTTL positive")
	}
	if s.APIBackoffMin <= 0 || s.APIBackoffMax < s.APIBackoffMin {
		bad("apiBackoff", fmt.Sprintf("%s..%s", s.APIBackoffMin, s.APIBackoffMax), "min must be positive and max >= min")
	}
	if c.Notifiers.PollInterval < 0 || c.Notifiers.PollDelta < 0 {
		bad("notifiers.poll", fmt.Sprintf("%s/%d", c.Notifiers.PollInterval, c.Notifiers.PollDelta), "must be >= 0")
	}
	if c.CgroupRoot == "" || c.ProcRoot == "" {
		bad("cgroupRoot/procRoot", fmt.Sprintf("%q/%q", c.CgroupRoot, c.ProcRoot), "required")
	}
	if c.TaintHysteresis < 0 || c.Ladder.PDBFallbackWait < 0 {
		bad("taintHysteresis/pdbFallbackWait", fmt.Sprintf("%s/%s", c.TaintHysteresis, c.Ladder.PDBFallbackWait), "must be >= 0")
	}
	if c.Ladder.DryRun != s.DryRun {
		bad("dryRun", s.DryRun, "the ladder and the loop must agree")
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid agent configuration: %w", err)
	}
	return nil
}
