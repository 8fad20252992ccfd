package agent

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// APIVersion and Kind identify the configuration file.
const (
	APIVersion = "pressure.kube-pressure.io/v1alpha1"
	Kind       = "AgentConfiguration"
)

// AgentConfiguration is the v1alpha1 file format. Every optional field is a pointer (or a map/slice):
// nil means "not set, use the default".
type AgentConfiguration struct {
	metav1.TypeMeta `json:",inline"`

	// NodeName is the node this agent runs on (required; usually spec.nodeName through the downward API).
	NodeName *string `json:"nodeName,omitempty"`
	// Kubeconfig is the path of a kubeconfig file; empty means in-cluster configuration.
	Kubeconfig *string `json:"kubeconfig,omitempty"`
	// KubeletConfigFile is the kubelet's KubeletConfiguration file on the host; empty means fetch the
	// running configuration from the kubelet's /configz through the API server's node proxy.
	KubeletConfigFile *string `json:"kubeletConfigFile,omitempty"`
	// Policy is "pressure" (our thresholds: the kubelet's hard thresholds plus Headroom, event-driven),
	// "kubelet" (reproduce the kubelet's eviction manager exactly, thresholds included) or
	// "reclaim-aware" ("pressure" on what the kernel cannot reclaim: clean page cache that is not
	// refaulting is not evicted for unless PSI and the refault counters confirm the pressure).
	Policy *string `json:"policy,omitempty"`
	// Headroom, per eviction signal, is how far above the kubelet's hard threshold our own threshold
	// sits: a quantity ("256Mi", "1000" inodes/pids) or a percentage of capacity ("5%"). Entries are
	// merged over the defaults; "0" puts our threshold at the kubelet's. Only with policy "pressure" or
	// "reclaim-aware".
	Headroom map[string]string `json:"headroom,omitempty"`
	// EvictionLead: with policy "pressure" or "reclaim-aware", a memory signal falling over two syncs in a
	// row so fast that it would reach zero within EvictionLead is acted on at once, as if its hard
	// threshold were crossed (the victim must die before the kernel's OOM killer strikes). "0s" turns it
	// off.
	EvictionLead *metav1.Duration `json:"evictionLead,omitempty"`
	// SyncPeriod is how often the agent evaluates when no notifier fires.
	SyncPeriod *metav1.Duration `json:"syncPeriod,omitempty"`
	// PodStatsMaxAge is how old every pod's stats (its cgroups, volumes and logs) may be on a sync while
	// every signal is far from its threshold (available at least twice the threshold), no eviction is
	// under way and memory does not stall; any other sync reads them afresh. "0s" reads them on every
	// sync, as the kubelet does.
	PodStatsMaxAge *metav1.Duration `json:"podStatsMaxAge,omitempty"`
	// APITimeout bounds each API call that is not a watch (watches are never cut).
	APITimeout *metav1.Duration `json:"apiTimeout,omitempty"`
	// KubeletConfigRefresh is how often the kubelet's configuration (KubeletConfigFile or /configz) is
	// read again; "0s" reads it only at start.
	KubeletConfigRefresh *metav1.Duration `json:"kubeletConfigRefresh,omitempty"`
	// Notifiers configures the kernel wake-ups that trigger an evaluation between sync periods.
	Notifiers *Notifiers `json:"notifiers,omitempty"`
	// Reclaim configures policy "reclaim-aware"'s kubelet backstop and its reclaim rung.
	Reclaim *Reclaim `json:"reclaim,omitempty"`
	// Eviction configures the escalation ladder.
	Eviction *Eviction `json:"eviction,omitempty"`
	// MaxEvictionsPerMinute bounds the evictions the agent requests in any sliding minute.
	MaxEvictionsPerMinute *int32 `json:"maxEvictionsPerMinute,omitempty"`
	// LoopBreaker configures the eviction-loop ledger and its node taint.
	LoopBreaker *LoopBreaker `json:"loopBreaker,omitempty"`
	// DryRun writes "would evict" events and metrics and never evicts, deletes, kills or taints.
	DryRun *bool `json:"dryRun,omitempty"`
	// MetricsBindAddress serves /metrics; "0" disables it.
	MetricsBindAddress *string `json:"metricsBindAddress,omitempty"`
	// HealthProbeBindAddress serves /healthz and /readyz; "0" disables it.
	HealthProbeBindAddress *string `json:"healthProbeBindAddress,omitempty"`
	// CgroupRoot is where the cgroup hierarchies are mounted (as seen by the agent).
	CgroupRoot *string `json:"cgroupRoot,omitempty"`
	// ProcRoot is where the host's /proc is mounted (as seen by the agent).
	ProcRoot *string `json:"procRoot,omitempty"`
	// KubeletRootDir is the kubelet's root directory (nodefs is the filesystem holding it).
	KubeletRootDir *string `json:"kubeletRootDir,omitempty"`
	// KubeletPodsDir is the kubelet's pods directory, where each pod's local volumes are measured (per-pod
	// disk usage for disk pressure); empty means <KubeletRootDir>/pods.
	KubeletPodsDir *string `json:"kubeletPodsDir,omitempty"`
	// PodLogsDir is the kubelet's podLogsDir (per-pod log usage for disk pressure).
	PodLogsDir *string `json:"podLogsDir,omitempty"`
	// PodDiskWalkMaxEntries bounds each pod's disk walk (its local volumes and logs together): after
	// this many entries the walk stops and the pod's usage is reported as a lower bound.
	PodDiskWalkMaxEntries *int64 `json:"podDiskWalkMaxEntries,omitempty"`
	// PodDiskWalkTimeout bounds each pod's disk walk in time, likewise.
	PodDiskWalkTimeout *metav1.Duration `json:"podDiskWalkTimeout,omitempty"`
	// ImageFsDir is a directory on the container runtime's image filesystem; empty means the runtime's
	// filesystem is the same as nodefs.
	ImageFsDir *string `json:"imageFsDir,omitempty"`
}

// Notifiers selects the kernel notifications that wake the agent up.
type Notifiers struct {
	// Memcg enables cgroup v1 memory.usage_in_bytes threshold notifications (eventfd) and cgroup v2
	// memory.events inotify watches.
	Memcg *bool `json:"memcg,omitempty"`
	// PSI enables pressure-stall-information triggers on /proc/pressure/memory.
	PSI *bool `json:"psi,omitempty"`
	// PSIWindow is the window of the node-wide memory PSI trigger; it fires when tasks stalled for a
	// tenth of it. A window that is not a multiple of 2s needs CAP_SYS_RESOURCE (any window before
	// Linux 6.4).
	PSIWindow *metav1.Duration `json:"psiWindow,omitempty"`
	// PollInterval is the shortest interval of the fallback poll of the memory signals between sync
	// periods: the poll reads at this rate near a threshold.
	PollInterval *metav1.Duration `json:"pollInterval,omitempty"`
	// PollMaxInterval is the longest interval of the poll, far from every threshold; equal to
	// PollInterval, the poll reads at a fixed rate.
	PollMaxInterval *metav1.Duration `json:"pollMaxInterval,omitempty"`
	// PollRampRate is the fastest fall of available memory, per second, that the poll must not miss:
	// it reads again after at most margin / PollRampRate (bounded by the two intervals).
	PollRampRate *resource.Quantity `json:"pollRampRate,omitempty"`
}

// Eviction configures the escalation ladder.
type Eviction struct {
	// PDBFallbackWait is the wait, under hard pressure, between a PodDisruptionBudget refusal and the
	// fallback DELETE.
	PDBFallbackWait *metav1.Duration `json:"pdbFallbackWait,omitempty"`
	// AllowDelete lets hard evictions refused by a PodDisruptionBudget fall back to a pod DELETE.
	AllowDelete *bool `json:"allowDelete,omitempty"`
	// AllowCgroupKill lets hard evictions SIGKILL the pod's processes on the node when the API server
	// cannot be reached.
	AllowCgroupKill *bool `json:"allowCgroupKill,omitempty"`
}

// LoopBreaker configures the eviction ledger, the per-workload avoidance and the pressure taint.
type LoopBreaker struct {
	// Enabled turns the ledger's avoidances, loop detection and the taint on.
	Enabled *bool `json:"enabled,omitempty"`
	// TaintKey is the key of the NoSchedule taint put on the node while it is under pressure.
	TaintKey *string `json:"taintKey,omitempty"`
	// TaintHysteresis is how long the taint stays after the pressure ended.
	TaintHysteresis *metav1.Duration `json:"taintHysteresis,omitempty"`
	// Window: evictions of the same workload at most Window apart count together for loop detection.
	Window *metav1.Duration `json:"window,omitempty"`
	// Cooldown is how long new pods of an evicted workload avoid the node.
	Cooldown *metav1.Duration `json:"cooldown,omitempty"`
	// LoopEvictions: a replacement evicted again is a loop when the workload has at least this many
	// evictions on the node within the window.
	LoopEvictions *int32 `json:"loopEvictions,omitempty"`
	// LoopCooldown is how long new pods of a workload in a loop avoid the node.
	LoopCooldown *metav1.Duration `json:"loopCooldown,omitempty"`
	// AvoidanceNamespace is where the agent writes its node's avoidance ConfigMap (the parameters of the
	// chart's MutatingAdmissionPolicy); empty writes none (avoidances are then only recorded).
	AvoidanceNamespace *string `json:"avoidanceNamespace,omitempty"`
	// AvoidanceNamePrefix prefixes the node name in the ConfigMap's name.
	AvoidanceNamePrefix *string `json:"avoidanceNamePrefix,omitempty"`
}

// Reclaim configures policy "reclaim-aware" near the kubelet's own threshold.
type Reclaim struct {
	// KubeletHorizon: without the reclaim rung, the backstop acts on the kubelet's working set only when
	// it is below the kubelet's threshold or falls fast enough to cross it within this horizon; "0s"
	// keeps the fixed 128Mi margin alone (before issue 33).
	KubeletHorizon *metav1.Duration `json:"kubeletHorizon,omitempty"`
	// Action is the reclaim rung: reclaim the pods' page cache instead of evicting.
	Action *ReclaimAction `json:"action,omitempty"`
}

// ReclaimAction is the reclaim rung.
type ReclaimAction struct {
	// Enabled turns the rung on; the agent must also be able to write memory.reclaim (cgroup v2) or
	// memory.force_empty (v1) of the pods' cgroups (the chart's reclaim option).
	Enabled *bool `json:"enabled,omitempty"`
	// MaxBytes bounds what one sync asks to reclaim, all pods together.
	MaxBytes *resource.Quantity `json:"maxBytes,omitempty"`
	// Settle is how long a reclaim has to bring the signal back before the agent evicts.
	Settle *metav1.Duration `json:"settle,omitempty"`
	// MinInterval is the shortest time between two reclaims for one signal.
	MinInterval *metav1.Duration `json:"minInterval,omitempty"`
}
