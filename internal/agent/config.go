package agent

import (
	"errors"
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/actuate"
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
	// TaintCooldown is how long the loop breaker's taint stays after the pressure ended.
	TaintCooldown time.Duration
	// APITimeout bounds every API request (default 10s).
	APITimeout time.Duration
}

// DefaultConfig returns the defaults for node.
func DefaultConfig(node string) Config {
	return Config{
		Settings: DefaultSettings(node), Notifiers: DefaultNotifiers,
		MetricsAddr: ":8080", HealthAddr: ":8081", CgroupRoot: "/sys/fs/cgroup", ProcRoot: "/proc",
		NodefsPath: "/var/lib/kubelet",
		Ladder:     actuate.LadderConfig{PDBFallbackWait: actuate.DefaultPDBFallbackWait, AllowDelete: true, AllowCgroupKill: true},
		Ledger:     actuate.LedgerPolicy{}, TaintCooldown: 5 * time.Minute, APITimeout: 10 * time.Second,
	}
}

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
	if s.Headroom.MinBytes < 0 || s.Headroom.Percent < 0 || s.Headroom.Percent >= 100 {
		bad("headroom", fmt.Sprintf("%d bytes, %g%%", s.Headroom.MinBytes, s.Headroom.Percent), "must be >= 0 and below 100%")
	}
	if s.MaxEvictionsPerSync < 1 {
		bad("maxEvictionsPerSync", s.MaxEvictionsPerSync, "must be at least 1")
	}
	if s.EvictionRate <= 0 || s.EvictionBurst < 1 {
		bad("evictionRateLimit", fmt.Sprintf("%g/s burst %d", s.EvictionRate, s.EvictionBurst), "rate must be positive and burst at least 1")
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
	if c.TaintCooldown < 0 || c.Ladder.PDBFallbackWait < 0 {
		bad("taintCooldown/pdbFallbackWait", fmt.Sprintf("%s/%s", c.TaintCooldown, c.Ladder.PDBFallbackWait), "must be >= 0")
	}
	if c.Ladder.DryRun != s.DryRun {
		bad("dryRun", s.DryRun, "the ladder and the loop must agree")
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("invalid agent configuration: %w", err)
	}
	return nil
}
