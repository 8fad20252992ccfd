package explain

import (
	"github.com/kube-pressure/pressure/internal/decision"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Input is everything an explanation is computed from.
type Input struct {
	// Node is the node's name.
	Node string
	// Source says where the data came from ("live", "snapshot"); printed as is.
	Source string
	// Now is the reference time of stats ages. The zero time means "the newest stats time in the
	// snapshot", which is what an offline snapshot can offer.
	Now time.Time
	// Capacity is the node's status.capacity: memory, ephemeral-storage and hugepages-* in bytes,
	// cpu in millicores, pid as a count. Other resources are ignored by the allocatable math.
	Capacity map[string]int64
	// Config is the parsed eviction configuration, before the containerfs thresholds are derived
	// (Build derives them from the snapshot's filesystem layout as the kubelet does).
	Config threshold.Config
	// DisableLocalStorageCapacityIsolation is the kubelet's localStorageCapacityIsolation=false: no
	// eviction for emptyDir sizeLimit and ephemeral-storage limits. The zero value is the default (on).
	DisableLocalStorageCapacityIsolation bool
	// Semantics is the kubelet release whose eviction manager the prediction follows (the node's
	// status.nodeInfo.kubeletVersion or an override, and /configz's feature gates); zero = the pinned
	// 1.37.
	Semantics decision.Semantics
	// Snapshot holds the observations, per-pod stats and filesystem layout.
	Snapshot signal.Snapshot
	// Candidates are the node's active pods, with Stats set from Snapshot.Pods.
	Candidates []rank.Candidate
	// NodeConditions are the conditions the node reports (status.conditions).
	NodeConditions []NodeCondition
	// Avoidances are the pressure-agent's avoidances of the node (from its ledger).
	Avoidances []Avoidance
	// Agent are pressure-agent's policy settings and where they came from; nil means its defaults
	// (policy.DefaultConfig), which the report says.
	Agent *AgentSettings
	// Reclaimable is the estimate of what the kubelet's node-level reclaim (container and image GC) could
	// free, as the agent makes it (unused images of the node's status.images, terminated pods' logs);
	// nil when unknown: the agent's answer then counts reclaim as freeing nothing.
	Reclaimable *policy.Reclaimable
	// DeletionTimestamps are the deletion timestamps of the terminating candidates, by pod UID.
	DeletionTimestamps map[string]time.Time
	// TerminalPods are the pods in a terminal phase (Failed, Succeeded) whose deletion is not finished:
	// not candidates, but the agent credits their measured usage until they are gone.
	TerminalPods []policy.Pod
	// Ledger is pressure-agent's eviction ledger as read from the node's annotation (its evictions in
	// flight are credited); nil when unknown, which the report says.
	Ledger *policy.Ledger
	// Ladder is how pressure-agent escalates an eviction (PDB fallback, cgroup kill); nil when unknown.
	Ladder *AgentLadder
	// ForeseeAvoidance says what evicting the pod with this UID at this time does to its workload's
	// avoidance of the node, by the agent's ledger rules ("" when nothing, or unknown); nil: unknown.
	ForeseeAvoidance func(uid string, at time.Time) string
	// Warnings found while loading the input (a pod without stats, ...); copied to the Report.
	Warnings []string
	// Unavailable says what could not be read (a kubelet that did not answer) and what the report
	// shows instead; copied to the Report.
	Unavailable []string
}

// NodeCondition is one node status condition as the node reports it.
type NodeCondition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Since is the condition's lastTransitionTime (zero when unknown).
	Since   time.Time `json:"since,omitzero"`
	Message string    `json:"message,omitempty"`
}

// Report is the explanation of one node. Amounts are exact strings: bytes, counts and millicores.
type Report struct {
	Node   string `json:"node"`
	Source string `json:"source,omitempty"`
	// Verdict is the report in one line: whether the kubelet evicts (for what, and how far past which
	// threshold), else whether pressure-agent would, else the tightest margin. Text output starts with it.
	Verdict string `json:"verdict"`
	// Now is the reference time of the stats ages.
	Now time.Time `json:"now"`
	// Allocatable maps each resource to its allocatable amount (exact).
	Allocatable map[string]string `json:"allocatable"`
	// AllocatableMath is every step of the allocatable arithmetic, by resource name.
	AllocatableMath []Allocation `json:"allocatableMath"`
	// Thresholds says, for every configured threshold, the usage at which it fires.
	Thresholds []Firing `json:"thresholds"`
	// Signals is every signal now: one row per configured threshold, then observed signals that no
	// threshold watches.
	Signals []SignalRow `json:"signals"`
	// NodeConditions are the conditions the node reports now.
	NodeConditions []NodeCondition `json:"nodeConditions"`
	// Avoidances are the agent's avoidances of the node still in force at Now, the soonest to end first.
	Avoidances []Avoidance `json:"avoidances,omitempty"`
	// Kubelet is exactly what the kubelet would do if the pressure persisted.
	Kubelet Kubelet `json:"kubelet"`
	// Pressure is what pressure-agent would do with its own policy if the pressure persisted, and
	// where and why that differs from Kubelet.
	Pressure *Pressure `json:"pressure,omitempty"`
	// Warnings are problems with the input that do not stop the explanation.
	Warnings []string `json:"warnings,omitempty"`
	// Unavailable is set when the report is partial: what could not be read and what is shown
	// instead (a live node whose kubelet did not answer is explained from the Node object alone).
	Unavailable []string `json:"unavailable,omitempty"`
}

// Allocation is the allocatable arithmetic of one resource.
type Allocation struct {
	Resource       string `json:"resource"`
	Capacity       string `json:"capacity"`
	KubeReserved   string `json:"kubeReserved"`
	SystemReserved string `json:"systemReserved"`
	// HardEviction is the hard-eviction reservation, resolved from HardEvictionThreshold.
	HardEviction          string `json:"hardEviction"`
	HardEvictionThreshold string `json:"hardEvictionThreshold,omitempty"`
	// HugePages is the hugepages capacity subtracted from memory.
	HugePages   string `json:"hugePages,omitempty"`
	Allocatable string `json:"allocatable"`
	// PercentOfCapacity is Allocatable as a percentage of Capacity.
	PercentOfCapacity float64 `json:"percentOfCapacity"`
	// PodsCgroupLimit is the pods cgroup limit for memory (capacity − reservations without the
	// eviction reservation) when "pods" is enforced.
	PodsCgroupLimit string `json:"podsCgroupLimit,omitempty"`

	res threshold.ResourceAllocation
}

// Firing says at which usage one threshold is met.
type Firing struct {
	// Threshold is the threshold as configured: "memory.available<100Mi", with grace and min-reclaim.
	Threshold string `json:"threshold"`
	Signal    string `json:"signal"`
	Hard      bool   `json:"hard"`
	// Known is false when neither an observation nor the node's capacity gives the capacity.
	Known bool `json:"known"`
	// Capacity is the amount the threshold resolves against, and CapacitySource where it came from
	// ("observed", "node capacity", "pods cgroup limit").
	Capacity       string `json:"capacity,omitempty"`
	CapacitySource string `json:"capacitySource,omitempty"`
	// Resolved is the threshold amount: available must stay at or above it.
	Resolved string `json:"resolved,omitempty"`
	// FiresAbove is the usage above which the threshold is met (Capacity − Resolved).
	FiresAbove string `json:"firesAbove,omitempty"`
	// PercentOfCapacity is FiresAbove as a percentage of the resource's capacity (node memory
	// capacity for allocatableMemory.available).
	PercentOfCapacity float64 `json:"percentOfCapacity,omitempty"`
	// Explanation is the sentence Text prints.
	Explanation string `json:"explanation"`
}

// SignalRow is one signal now, against one threshold.
type SignalRow struct {
	Signal string `json:"signal"`
	// Threshold is the configured threshold ("" for a signal no threshold watches).
	Threshold string `json:"thresholdSpec,omitempty"`
	Observed  bool   `json:"observed"`
	Available string `json:"available,omitempty"`
	Capacity  string `json:"capacity,omitempty"`
	// Resolved is the resolved threshold amount ("threshold" in the JSON).
	Resolved string `json:"threshold,omitempty"`
	// Margin is Available − Resolved: how much more can be used before the threshold is met; the
	// threshold is met when Margin is negative (available strictly below the threshold).
	Margin string `json:"margin,omitempty"`
	Met    bool   `json:"met"`
	// StatsTime is the observation's timestamp and StatsAgeSeconds its age at Report.Now.
	StatsTime       time.Time `json:"statsTime,omitzero"`
	StatsAgeSeconds *float64  `json:"statsAgeSeconds,omitempty"`

	sig   signal.Signal
	avail int64
	margn int64
}

// Kubelet is what the node's kubelet (Semantics: its release, the pinned v1.37 when unknown) would do
// if the pressure persisted: the full order, soft thresholds as if their grace period had passed,
// node-level image and container garbage collection assumed to free nothing. The order starts with the pods over a local ephemeral-storage
// limit, which the kubelet evicts at its next synchronize whether or not a threshold is met; the
// rest is empty when no threshold is met.
type Kubelet struct {
	// Semantics is the kubelet release (minor, reported version, feature gates) the prediction follows.
	Semantics decision.Semantics `json:"semantics"`
	// LocalStorageCapacityIsolation is the kubelet setting that enables the local-storage evictions.
	LocalStorageCapacityIsolation bool `json:"localStorageCapacityIsolation"`
	// ThresholdsMet are the signals of the thresholds met, in the order the kubelet acts on them.
	ThresholdsMet []string `json:"thresholdsMet"`
	// NodeConditions are the conditions the kubelet reports for them.
	NodeConditions []string `json:"nodeConditions"`
	// ResourceToReclaim is the resource of the threshold acted on ("" when none).
	ResourceToReclaim string `json:"resourceToReclaim,omitempty"`
	// ActedOn is the threshold that drives eviction.
	ActedOn string `json:"actedOn,omitempty"`
	// Ranking names the comparison keys of the ranking used, in order.
	Ranking []string `json:"ranking,omitempty"`
	// EvictionOrder is first the pods over a local ephemeral-storage limit (path local-storage, the
	// kubelet's order among them unspecified, listed by namespace/name), then, when a threshold is
	// met, one entry per other active pod in ranking order (path pressure).
	EvictionOrder []Victim `json:"evictionOrder"`
	// Notes are assumptions and kubelet nondeterminism worth knowing.
	Notes []string `json:"notes,omitempty"`

	usageUnit unit
}

// Victim is one pod in the predicted eviction order.
type Victim struct {
	Pod      string `json:"pod"`
	UID      string `json:"uid"`
	QOSClass string `json:"qosClass"`
	Priority int32  `json:"priority"`
	// Critical pods are ranked but never evicted; CriticalReason says why they are critical.
	Critical       bool   `json:"critical"`
	CriticalReason string `json:"criticalReason,omitempty"`
	// HasStats is false for a pod without stats (it ranks first in every stats-based key).
	HasStats bool `json:"hasStats"`
	// Path is local-storage for a pod over a local ephemeral-storage limit, pressure for the ranking.
	Path string `json:"path"`
	// LocalStorage is the limit the pod exceeds: why it is on the local-storage path, or, for a
	// critical pod, what the kubelet refuses to evict it for.
	LocalStorage *LocalStorageLimit `json:"localStorage,omitempty"`
	// Usage, Request and UsageAboveRequest are what the ranking compared (path pressure), in the signal's unit
	// (memory: working set and memory request; disk: bytes or inodes and the ephemeral-storage
	// request; pid: the process count, no request).
	Usage             string `json:"usage,omitempty"`
	Request           string `json:"request,omitempty"`
	UsageAboveRequest string `json:"usageAboveRequest,omitempty"`
	// StatsAgeSeconds is the age of the pod's stats at Report.Now.
	StatsAgeSeconds *float64 `json:"statsAgeSeconds,omitempty"`
	// DecidedBy is the ranking key that put this pod before the next one ("" for the last), and Why
	// says it in words with the compared values.
	DecidedBy string `json:"decidedBy,omitempty"`
	Why       string `json:"why,omitempty"`
	// Message is the kubelet's exact eviction message (empty for critical pods, which it never
	// evicts); GracePeriodSeconds the effective kill grace period; Annotations the Evicted event's.
	Message            string            `json:"message,omitempty"`
	GracePeriodSeconds int64             `json:"gracePeriodSeconds,omitempty"`
	Annotations        map[string]string `json:"annotations,omitempty"`

	vals rank.Values
}

// AgentSettings are pressure-agent's policy settings for the prediction.
type AgentSettings struct {
	Config policy.Config
	// Source says where they came from, e.g. "--agent-config agent.yaml".
	Source string
}

// Pressure is what pressure-agent would do if the pressure persisted: its thresholds (the kubelet's
// hard ones raised by the headroom), the pods it would evict at one sync, in order, what it does with
// every other ranked pod, and where and why that differs from the kubelet's answer.
type Pressure struct {
	// Settings says which agent settings were used: the --agent-config file, or the defaults.
	Settings string `json:"settings"`
	// Policy is the agent's policy, "pressure", "kubelet" or "reclaim-aware".
	Policy string `json:"policy"`
	// Reclaim is, for policy reclaim-aware, each memory signal by the working set and by the
	// non-reclaimable estimate, and what the agent acts on.
	Reclaim []AgentReclaim `json:"reclaim,omitempty"`
	// ReclaimActions are, for policy reclaim-aware, the reclaims of page cache the agent would ask for
	// instead of evicting (the reclaim rung, reclaim.action.enabled), or, with the rung off, the ones that
	// would have avoided the eviction.
	ReclaimActions []AgentReclaimAction `json:"reclaimActions,omitempty"`
	// Thresholds are the agent's thresholds, one per configured kubelet threshold, in the same order.
	Thresholds []AgentThreshold `json:"thresholds"`
	// ThresholdsMet are the signals the agent's thresholds put under pressure.
	ThresholdsMet  []string `json:"thresholdsMet"`
	NodeConditions []string `json:"nodeConditions"`
	// ActedOn is the agent's threshold that drives eviction.
	ActedOn string `json:"actedOn,omitempty"`
	// Target is how much the agent would reclaim (policy pressure; nil when nothing is to be evicted).
	Target *AgentTarget `json:"target,omitempty"`
	// Credits are the terminating pods whose usage the agent counts as available again.
	Credits []AgentCredit `json:"credits,omitempty"`
	// Victims are the pods the agent would evict at one sync, in order.
	Victims []AgentVictim `json:"victims"`
	// Walk is every pod the agent ranked, in the kubelet's rank order, with what it does with it.
	Walk []AgentPod `json:"walk,omitempty"`
	// Differences are the decisions where pressure-agent and the kubelet disagree, and why.
	Differences []string `json:"differences"`
	// Notes are assumptions of the prediction.
	Notes []string `json:"notes,omitempty"`
}

// AgentThreshold is one of the agent's thresholds next to the kubelet's.
type AgentThreshold struct {
	Signal string `json:"signal"`
	// Kubelet is the kubelet's threshold as configured ("memory.available<100Mi").
	Kubelet string `json:"kubelet"`
	Hard    bool   `json:"hard"`
	// Known is false when the signal is not observed (the threshold is then never met).
	Known bool `json:"known"`
	// KubeletResolved is the kubelet's threshold amount, Headroom what the agent adds (as configured:
	// "256Mi", "5%"; empty for soft thresholds and policy kubelet), Resolved the agent's threshold.
	KubeletResolved string `json:"kubeletResolved,omitempty"`
	Headroom        string `json:"headroom,omitempty"`
	// HeadroomWithheld says why no headroom was added (Headroom is then "0"): the raised threshold would
	// reach the kubelet's image GC start, where the kubelet deletes unused images, not pods.
	HeadroomWithheld string `json:"headroomWithheld,omitempty"`
	Resolved         string `json:"resolved,omitempty"`
	// MinReclaim is the agent's minimum reclaim (the kubelet's, or 100Mi on byte thresholds without one).
	MinReclaim string `json:"minReclaim,omitempty"`
	// FiresAbove is the usage above which the agent's threshold is met (capacity − Resolved).
	FiresAbove string `json:"firesAbove,omitempty"`
	Met        bool   `json:"met"`

	sig                           signal.Signal
	kubeletV, resolvedV, reclaimV int64
}

// AgentTarget is how much the acted-on signal must gain: its threshold plus minimum reclaim (Goal; GoalWhy
// says why when it is another goal) minus what is available (Available, counting credited pods); at most
// MaxPods pods per sync, and no more once the pods taken grow Growth per second (when set).
type AgentTarget struct {
	Signal    string `json:"signal"`
	Available string `json:"available"`
	Goal      string `json:"goal"`
	GoalWhy   string `json:"goalWhy,omitempty"`
	Need      string `json:"need"`
	// Growth, when set, is a growth of usage other than page cache (per second) that also ends the walk:
	// once the pods taken grow that fast, their eviction stops the fall (the backstop).
	Growth  string `json:"growth,omitempty"`
	MaxPods int    `json:"maxPods"`

	sig                   signal.Signal
	available, goal, need int64
	growth                int64
}

// AgentCredit is a terminating pod whose usage counts as available again.
type AgentCredit struct {
	Pod     string `json:"pod"`
	Memory  string `json:"memory"`
	Threads string `json:"threads,omitempty"`
	Why     string `json:"why"`

	memory int64
}

// AgentVictim is one pod the agent would evict.
type AgentVictim struct {
	Pod string `json:"pod"`
	UID string `json:"uid"`
	// Rank is the pod's place in the kubelet's ranking.
	Rank int `json:"rank"`
	// Frees is what evicting it is expected to release of the acted-on signal ("" when unknown).
	Frees              string `json:"frees,omitempty"`
	GracePeriodSeconds int64  `json:"gracePeriodSeconds"`
	Why                string `json:"why"`
	// IfRefused says what the agent does when a PodDisruptionBudget refuses this eviction.
	IfRefused string `json:"ifRefused,omitempty"`
	// Avoidance says what the eviction does to the pod's workload's avoidance of the node.
	Avoidance string `json:"avoidance,omitempty"`

	release policy.Release
	hard    bool
}

// AgentPod is one ranked pod and what the agent does with it.
type AgentPod struct {
	Pod   string `json:"pod"`
	Rank  int    `json:"rank"`
	Frees string `json:"frees,omitempty"`
	// Action is "evict" or "skip"; Reason says why a pod is skipped.
	Action string `json:"action"`
	Reason string `json:"reason,omitempty"`

	release policy.Release
}
