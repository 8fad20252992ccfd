package agent

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Policy selects whose thresholds the agent applies.
type Policy string

// Policies.
const (
	// PolicyPressure: the kubelet's hard thresholds plus Headroom, acted on as soon as a notifier fires.
	PolicyPressure Policy = "pressure"
	// PolicyKubelet: the kubelet's eviction manager, reproduced exactly (thresholds, grace, ranking).
	PolicyKubelet Policy = "kubelet"
	// PolicyReclaimAware: PolicyPressure on what the kernel cannot reclaim; page cache that is clean and
	// not refaulting counts as available unless PSI and the refault counters confirm the pressure.
	PolicyReclaimAware Policy = "reclaim-aware"
)

// validSignals are the kubelet's eviction signals.
var validSignals = map[string]bool{
	"memory.available": true, "allocatableMemory.available": true,
	"nodefs.available": true, "nodefs.inodesFree": true,
	"imagefs.available": true, "imagefs.inodesFree": true,
	"containerfs.available": true, "containerfs.inodesFree": true,
	"pid.available": true,
}

func signalNames() []string {
	out := make([]string, 0, len(validSignals))
	for s := range validSignals {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// Headroom is how far above the kubelet's hard threshold of Signal our threshold sits: either a
// Quantity (bytes for memory and disk, a count for inodes and PIDs) or a Percentage of capacity.
type Headroom struct {
	Signal string
	// Quantity is set for an absolute headroom.
	Quantity *resource.Quantity
	// Percentage (0 ≤ p < 1) is used when Quantity is nil.
	Percentage float64
}

// Config is the validated configuration the agent runs with.
type Config struct {
	NodeName          string
	Kubeconfig        string // "" = in-cluster
	KubeletConfigFile string // "" = fetch /configz
	Policy            Policy
	// Headroom is sorted by signal; empty with PolicyKubelet.
	Headroom               []Headroom
	EvictionLead           time.Duration // 0 = off
	SyncPeriod             time.Duration
	PodStatsMaxAge         time.Duration // 0 = every sync
	APITimeout             time.Duration
	KubeletConfigRefresh   time.Duration // 0 = only at start
	Notifiers              NotifierConfig
	Ladder                 LadderConfig
	Reclaim                ReclaimConfig
	MaxEvictionsPerMinute  int
	LoopBreaker            LoopBreakerConfig
	DryRun                 bool
	MetricsBindAddress     string // "0" = disabled
	HealthProbeBindAddress string // "0" = disabled
	Paths                  Paths
}

// NotifierConfig selects the wake-up sources.
type NotifierConfig struct {
	Memcg, PSI      bool
	PSIWindow       time.Duration
	PollInterval    time.Duration
	PollMaxInterval time.Duration
	PollRampRate    int64 // bytes per second
}

// ReclaimConfig is policy "reclaim-aware"'s backstop horizon and reclaim rung.
type ReclaimConfig struct {
	KubeletHorizon time.Duration // 0 = the fixed margin alone
	Action         policy.ReclaimAction
}

// LadderConfig is the escalation ladder (actuate.LadderConfig without the dry-run switch).
type LadderConfig struct {
	PDBFallbackWait time.Duration
	AllowDelete     bool
	AllowCgroupKill bool
}

// LoopBreakerConfig is the ledger, the avoidances and the pressure taint.
type LoopBreakerConfig struct {
	Enabled          bool
	TaintKey         string
	TaintHysteresis  time.Duration
	Window, Cooldown time.Duration
	LoopEvictions    int
	LoopCooldown     time.Duration
	// AvoidanceNamespace "" = no avoidance ConfigMap.
	AvoidanceNamespace, AvoidanceNamePrefix string
}

// Paths are the host paths as the agent sees them.
type Paths struct {
	CgroupRoot, ProcRoot, KubeletRootDir string
	ImageFsDir                           string // "" = same filesystem as nodefs
	PodLogsDir                           string // "" = pod logs not measured
	KubeletPodsDir                       string // "" = <KubeletRootDir>/pods
	// PodDiskWalkMaxEntries and PodDiskWalkTimeout bound each pod's disk walk.
	PodDiskWalkMaxEntries int
	PodDiskWalkTimeout    time.Duration
}

// Convert turns a defaulted, validated configuration into a Config. It fails only on a configuration
// Validate would reject.
func Convert(c *AgentConfiguration) (*Config, error) {
	cfg := &Config{
		NodeName: *c.NodeName, Kubeconfig: *c.Kubeconfig, KubeletConfigFile: *c.KubeletConfigFile,
		Policy:       Policy(*c.Policy),
		EvictionLead: c.EvictionLead.Duration,
		SyncPeriod:   c.SyncPeriod.Duration, PodStatsMaxAge: c.PodStatsMaxAge.Duration, APITimeout: c.APITimeout.Duration,
		KubeletConfigRefresh: c.KubeletConfigRefresh.Duration,
		Notifiers: NotifierConfig{Memcg: *c.Notifiers.Memcg, PSI: *c.Notifiers.PSI, PSIWindow: c.Notifiers.PSIWindow.Duration,
			PollInterval: c.Notifiers.PollInterval.Duration, PollMaxInterval: c.Notifiers.PollMaxInterval.Duration,
			PollRampRate: c.Notifiers.PollRampRate.Value()},
		Ladder: LadderConfig{PDBFallbackWait: c.Eviction.PDBFallbackWait.Duration,
			AllowDelete: *c.Eviction.AllowDelete, AllowCgroupKill: *c.Eviction.AllowCgroupKill},
		Reclaim: ReclaimConfig{KubeletHorizon: c.Reclaim.KubeletHorizon.Duration, Action: policy.ReclaimAction{
			Enabled: *c.Reclaim.Action.Enabled, MaxBytes: c.Reclaim.Action.MaxBytes.Value(),
			Settle: c.Reclaim.Action.Settle.Duration, MinInterval: c.Reclaim.Action.MinInterval.Duration}},
		MaxEvictionsPerMinute: int(*c.MaxEvictionsPerMinute),
		LoopBreaker:           convertLoopBreaker(c.LoopBreaker),
		DryRun:                *c.DryRun,
		MetricsBindAddress:    *c.MetricsBindAddress, HealthProbeBindAddress: *c.HealthProbeBindAddress,
		Paths: Paths{CgroupRoot: *c.CgroupRoot, ProcRoot: *c.ProcRoot, KubeletRootDir: *c.KubeletRootDir,
			ImageFsDir: *c.ImageFsDir, PodLogsDir: *c.PodLogsDir, KubeletPodsDir: *c.KubeletPodsDir,
			PodDiskWalkMaxEntries: int(*c.PodDiskWalkMaxEntries), PodDiskWalkTimeout: c.PodDiskWalkTimeout.Duration},
	}
	for _, s := range signalNames() {
		v, ok := c.Headroom[s]
		if !ok {
			continue
		}
		h, err := parseHeadroom(s, v)
		if err != nil {
			return nil, fmt.Errorf("headroom.%s: %w", s, err)
		}
		cfg.Headroom = append(cfg.Headroom, h)
	}
	return cfg, nil
}

// parseHeadroom parses "256Mi", "1000" or "5%" (0 ≤ p < 100).
func parseHeadroom(signal, v string) (Headroom, error) {
	if pct, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(pct, 64)
		if err != nil {
			return Headroom{}, fmt.Errorf("percentage %q: %w", v, err)
		}
		if !(f >= 0 && f < 100) {
			return Headroom{}, fmt.Errorf("percentage %q must be at least 0%% and below 100%%", v)
		}
		return Headroom{Signal: signal, Percentage: f / 100}, nil
	}
	q, err := threshold.ParseQuantity(v)
	if err != nil {
		return Headroom{}, fmt.Errorf("quantity %q: %w", v, err)
	}
	if q.Sign() < 0 {
		return Headroom{}, fmt.Errorf("quantity %q must not be negative", v)
	}
	return Headroom{Signal: signal, Quantity: &q}, nil
}

func convertLoopBreaker(lb *LoopBreaker) LoopBreakerConfig {
	return LoopBreakerConfig{Enabled: *lb.Enabled, TaintKey: *lb.TaintKey, TaintHysteresis: lb.TaintHysteresis.Duration,
		Window: lb.Window.Duration, Cooldown: lb.Cooldown.Duration, LoopEvictions: int(*lb.LoopEvictions),
		LoopCooldown: lb.LoopCooldown.Duration, AvoidanceNamespace: *lb.AvoidanceNamespace,
		AvoidanceNamePrefix: *lb.AvoidanceNamePrefix}
}
