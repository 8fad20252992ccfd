package agent

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/config/cmdline"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
)

// Defaults (docs/agent-config.md lists them with their units; a test compares the two). Each is written
// once: a default that a lower package also needs (the policy, the ledger, the ladder, the sources)
// is that package's constant, referenced here; the rest are owned here and the agent's shell uses them
// (internal/agent's DefaultConfig is this package's Defaults, converted).
const (
	DefaultPolicy         = PolicyPressure
	DefaultSyncPeriod     = 10 * time.Second
	DefaultPodStatsMaxAge = time.Minute
	DefaultEvictionLead   = policy.DefaultEvictionLead
	// DefaultAPITimeout bounds each API call that is not a watch. It is well under the time a fast
	// memory ramp takes to exhaust the headroom (256Mi at 256 MiB/s is a second; the eviction request
	// itself takes milliseconds on a healthy API server), so a stalled API server fails a call in time
	// for the policy's backoff and the cgroup-kill rung, instead of holding the loop for client-go's
	// default (none) or the 10 s the agent once used as the HTTP client's timeout, which also cut every
	// watch.
	DefaultAPITimeout             = 2 * time.Second
	DefaultKubeletConfigRefresh   = time.Minute
	DefaultMemcg                  = true
	DefaultPSI                    = true
	DefaultPollInterval           = 25 * time.Millisecond
	DefaultPollMaxInterval        = time.Second
	DefaultPSIWindow              = 2 * time.Second
	DefaultPDBFallbackWait        = actuate.DefaultPDBFallbackWait
	DefaultAllowDelete            = true
	DefaultAllowCgroupKill        = false
	DefaultMaxEvictionsPerMinute  = policy.DefaultMaxEvictionsPerMinute
	DefaultLoopBreakerEnabled     = true
	DefaultTaintKey               = loopbreaker.TaintKey
	DefaultLoopWindow             = policy.DefaultLoopWindow
	DefaultLoopCooldown           = policy.DefaultLoopCooldown
	DefaultTaintHysteresis        = policy.DefaultTaintHysteresis
	DefaultLoopEvictions          = policy.DefaultLoopEvictions
	DefaultLoopAvoidance          = policy.DefaultLoopAvoidance
	DefaultAvoidanceNamePrefix    = loopbreaker.DefaultAvoidancePrefix
	DefaultDryRun                 = false
	DefaultMetricsBindAddress     = cmdline.DefaultMetricsBindAddress
	DefaultHealthProbeBindAddress = cmdline.DefaultHealthProbeBindAddress
	// DefaultCgroupRoot and DefaultProcRoot are cgroupfs's and procfs's DefaultRoot, and the pod-disk
	// walk's limits podfs's defaults, written here again because those packages are Linux-only and
	// kubectl-pressure, which reads this configuration, is built for darwin and windows too;
	// defaults_linux_test.go fails when they differ.
	DefaultCgroupRoot     = "/sys/fs/cgroup"
	DefaultProcRoot       = "/proc"
	DefaultKubeletRootDir = "/var/lib/kubelet"
	DefaultPodLogsDir     = "/var/log/pods"
	// DefaultPodDiskWalkMaxEntries and DefaultPodDiskWalkTimeout are podfs's defaults (docs/security.md,
	// "Per-pod disk usage": a million entries stay under 8 MiB of heap).
	DefaultPodDiskWalkMaxEntries = 1_000_000
	DefaultPodDiskWalkTimeout    = 2 * time.Second
)

// DefaultPollRampRate is the fastest fall of available memory the adaptive poll assumes: 4Gi per second,
// above the fastest single allocator measured on these machines (about 1 GiB/s in a pod).
const DefaultPollRampRate = "4Gi"

// PollDelta is not a field of the file: the fallback poll also wakes the agent on a change of the memory
// signals of this many bytes since its last read (internal/agent's poll and kubectl pressure simulate's).
const PollDelta = 32 << 20

// DefaultHeadroom is the headroom above the kubelet's hard thresholds with policies "pressure" and
// "reclaim-aware", as the file writes it: policy.DefaultHeadroom's ("256Mi" for the memory signals, "5%"
// for the disk, inode and PID signals; that function says why).
func DefaultHeadroom() map[string]string {
	out := map[string]string{}
	for s, v := range policy.DefaultHeadroom() {
		out[string(s)] = v.String()
	}
	return out
}

func str(s string) *string { return &s }
func boolean(b bool) *bool { return &b }
func i32(i int32) *int32   { return &i }
func dur(d time.Duration) *metav1.Duration {
	return &metav1.Duration{Duration: d}
}

// SetDefaults fills every unset field. Headroom entries are merged over DefaultHeadroom with policy
// "pressure" or "reclaim-aware" and left alone with policy "kubelet" (where Validate rejects any).
func SetDefaults(c *AgentConfiguration) {
	setString(&c.NodeName, "")
	setString(&c.Kubeconfig, "")
	setString(&c.KubeletConfigFile, "")
	setString(&c.Policy, string(DefaultPolicy))
	if p := Policy(*c.Policy); p == PolicyPressure || p == PolicyReclaimAware {
		h := DefaultHeadroom()
		for k, v := range c.Headroom {
			h[k] = v
		}
		c.Headroom = h
	}
	setDuration(&c.EvictionLead, DefaultEvictionLead)
	setDuration(&c.SyncPeriod, DefaultSyncPeriod)
	setDuration(&c.PodStatsMaxAge, DefaultPodStatsMaxAge)
	setDuration(&c.APITimeout, DefaultAPITimeout)
	setDuration(&c.KubeletConfigRefresh, DefaultKubeletConfigRefresh)
	if c.Notifiers == nil {
		c.Notifiers = &Notifiers{}
	}
	setBool(&c.Notifiers.Memcg, DefaultMemcg)
	setBool(&c.Notifiers.PSI, DefaultPSI)
	setDuration(&c.Notifiers.PollInterval, DefaultPollInterval)
	setDuration(&c.Notifiers.PollMaxInterval, max(DefaultPollMaxInterval, c.Notifiers.PollInterval.Duration))
	setDuration(&c.Notifiers.PSIWindow, DefaultPSIWindow)
	if c.Notifiers.PollRampRate == nil {
		q := resource.MustParse(DefaultPollRampRate)
		c.Notifiers.PollRampRate = &q
	}
	if c.Eviction == nil {
		c.Eviction = &Eviction{}
	}
	setDuration(&c.Eviction.PDBFallbackWait, DefaultPDBFallbackWait)
	setBool(&c.Eviction.AllowDelete, DefaultAllowDelete)
	setBool(&c.Eviction.AllowCgroupKill, DefaultAllowCgroupKill)
	if c.MaxEvictionsPerMinute == nil {
		c.MaxEvictionsPerMinute = i32(DefaultMaxEvictionsPerMinute)
	}
	setLoopBreaker(c)
	setReclaim(c)
	setBool(&c.DryRun, DefaultDryRun)
	setString(&c.MetricsBindAddress, DefaultMetricsBindAddress)
	setString(&c.HealthProbeBindAddress, DefaultHealthProbeBindAddress)
	setString(&c.CgroupRoot, DefaultCgroupRoot)
	setString(&c.ProcRoot, DefaultProcRoot)
	setString(&c.KubeletRootDir, DefaultKubeletRootDir)
	setString(&c.ImageFsDir, "")
	setString(&c.PodLogsDir, DefaultPodLogsDir)
	setString(&c.KubeletPodsDir, "")
	if c.PodDiskWalkMaxEntries == nil {
		n := int64(DefaultPodDiskWalkMaxEntries)
		c.PodDiskWalkMaxEntries = &n
	}
	setDuration(&c.PodDiskWalkTimeout, DefaultPodDiskWalkTimeout)
}

func setLoopBreaker(c *AgentConfiguration) {
	if c.LoopBreaker == nil {
		c.LoopBreaker = &LoopBreaker{}
	}
	setBool(&c.LoopBreaker.Enabled, DefaultLoopBreakerEnabled)
	setString(&c.LoopBreaker.TaintKey, DefaultTaintKey)
	setDuration(&c.LoopBreaker.Window, DefaultLoopWindow)
	setDuration(&c.LoopBreaker.Cooldown, DefaultLoopCooldown)
	setDuration(&c.LoopBreaker.TaintHysteresis, DefaultTaintHysteresis)
	if c.LoopBreaker.LoopEvictions == nil {
		c.LoopBreaker.LoopEvictions = i32(DefaultLoopEvictions)
	}
	setDuration(&c.LoopBreaker.LoopCooldown, DefaultLoopAvoidance)
	setString(&c.LoopBreaker.AvoidanceNamespace, "")
	setString(&c.LoopBreaker.AvoidanceNamePrefix, DefaultAvoidanceNamePrefix)
}

func setString(p **string, v string) {
	if *p == nil {
		*p = str(v)
	}
}

func setBool(p **bool, v bool) {
	if *p == nil {
		*p = boolean(v)
	}
}

func setDuration(p **metav1.Duration, v time.Duration) {
	if *p == nil {
		*p = dur(v)
	}
}

// Defaults of the reclaim section (policy "reclaim-aware"): policy.DefaultReclaimConfig's.
var (
	DefaultKubeletHorizon       = policy.DefaultKubeletHorizon
	DefaultReclaimActionEnabled = false
	DefaultReclaimMaxBytes      = resource.NewQuantity(policy.DefaultReclaimConfig().Action.MaxBytes, resource.BinarySI).String()
	DefaultReclaimSettle        = policy.DefaultReclaimConfig().Action.Settle
	DefaultReclaimMinInterval   = policy.DefaultReclaimConfig().Action.MinInterval
)

func setReclaim(c *AgentConfiguration) {
	if c.Reclaim == nil {
		c.Reclaim = &Reclaim{}
	}
	setDuration(&c.Reclaim.KubeletHorizon, DefaultKubeletHorizon)
	if c.Reclaim.Action == nil {
		c.Reclaim.Action = &ReclaimAction{}
	}
	a := c.Reclaim.Action
	setBool(&a.Enabled, DefaultReclaimActionEnabled)
	if a.MaxBytes == nil {
		q := resource.MustParse(DefaultReclaimMaxBytes)
		a.MaxBytes = &q
	}
	setDuration(&a.Settle, DefaultReclaimSettle)
	setDuration(&a.MinInterval, DefaultReclaimMinInterval)
}
