package agent

import (
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/daemon"
	"github.com/kube-pressure/pressure/internal/policy"
)

// Defaults (docs/agent-config.md lists them with their units).
const (
	DefaultPolicy                 = PolicyPressure
	DefaultSyncPeriod             = 10 * time.Second
	DefaultPodStatsMaxAge         = time.Minute
	DefaultEvictionLead           = policy.DefaultEvictionLead
	DefaultAPITimeout             = 2 * time.Second
	DefaultKubeletConfigRefresh   = time.Minute
	DefaultPollInterval           = 25 * time.Millisecond
	DefaultPollMaxInterval        = time.Second
	DefaultPSIWindow              = 2 * time.Second
	DefaultPDBFallbackWait        = 5 * time.Second
	DefaultAllowDelete            = true
	DefaultAllowCgroupKill        = false
	DefaultMaxEvictionsPerMinute  = 10
	DefaultLoopBreakerEnabled     = true
	DefaultTaintKey               = "pressure.kube-pressure.io/evicting"
	DefaultLoopWindow             = 10 * time.Minute
	DefaultLoopCooldown           = 5 * time.Minute
	DefaultTaintHysteresis        = 10 * time.Second
	DefaultLoopEvictions          = 2
	DefaultLoopAvoidance          = 30 * time.Minute
	DefaultAvoidanceNamePrefix    = "pressure-avoid-"
	DefaultMetricsBindAddress     = daemon.DefaultMetricsBindAddress
	DefaultHealthProbeBindAddress = daemon.DefaultHealthProbeBindAddress
	DefaultCgroupRoot             = "/sys/fs/cgroup"
	DefaultProcRoot               = "/proc"
	DefaultKubeletRootDir         = "/var/lib/kubelet"
	DefaultPodLogsDir             = "/var/log/pods"
	// DefaultPodDiskWalkMaxEntries and DefaultPodDiskWalkTimeout are podfs's defaults (docs/security.md,
	// "Per-pod disk usage": a million entries stay under 8 MiB of heap).
	DefaultPodDiskWalkMaxEntries = 1_000_000
	DefaultPodDiskWalkTimeout    = 2 * time.Second
)

// DefaultPollRampRate is the fastest fall of available memory the adaptive poll assumes: 4Gi per second,
// above the fastest single allocator measured on these machines (about 1 GiB/s in a pod).
const DefaultPollRampRate = "4Gi"

// DefaultHeadroom is the headroom above the kubelet's hard thresholds with policy "pressure".
// Memory: 256Mi above the kubelet's threshold (100Mi by default, so we act below 356Mi available),
// which at the 256 MiB/s a fast allocator reaches here leaves about a second for a graceful eviction
// before the kubelet's own hard eviction, and is small next to the gigabytes of a node. Disk, inodes and
// PIDs: 5% of capacity (the kubelet's nodefs.available<10% becomes 15%), since filling a disk takes
// minutes and a percentage scales with the filesystem.
func DefaultHeadroom() map[string]string {
	return map[string]string{
		"memory.available":            "256Mi",
		"allocatableMemory.available": "256Mi",
		"nodefs.available":            "5%",
		"nodefs.inodesFree":           "5%",
		"imagefs.available":           "5%",
		"imagefs.inodesFree":          "5%",
		"containerfs.available":       "5%",
		"containerfs.inodesFree":      "5%",
		"pid.available":               "5%",
	}
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
	setBool(&c.Notifiers.Memcg, true)
	setBool(&c.Notifiers.PSI, true)
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
	setBool(&c.DryRun, false)
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
	DefaultReclaimMaxBytes      = "2Gi"
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
