package explain

import (
	"time"

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
	// Snapshot holds the observations, per-pod stats and filesystem layout.
	Snapshot signal.Snapshot
	// Candidates are the node's active pods, with Stats set from Snapshot.Pods.
	Candidates []rank.Candidate
	// NodeConditions are the conditions the node reports (status.conditions).
	NodeConditions []NodeCondition
	// Avoidances are the pressure-agent's avoidances of the node (from its ledger).
	Avoidances []Avoidance
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
	// Pressure is reserved for where pressure's agent policy differs from the kubelet. Nil until
	// that policy exists.
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

// Kubelet is what the kubelet v1.36 would do if the pressure persisted: the full order, soft
// thresholds as if their grace period had passed, node-level image and container garbage
// collection assumed to free nothing. Everything is empty when no threshold is met.
type Kubelet struct {
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
	// EvictionOrder is one entry per active pod, first victim first.
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
	// Usage, Request and UsageAboveRequest are what the ranking compared, in the signal's unit
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

// Pressure is the section, reserved for later, that will show where pressure's own agent policy
// decides differently from the kubelet.
type Pressure struct {
	// Differences are the decisions where pressure and the kubelet disagree.
	Differences []string `json:"differences"`
}
