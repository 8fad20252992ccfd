package decision

import (
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// ThresholdID identifies a configured threshold by its index in Config.Thresholds. The kubelet keys its
// bookkeeping by the threshold value, which for thresholds taken unchanged from the parsed config is
// identity; the index is that identity. A State is only meaningful with the Config it was built with:
// when the configuration changes, start from a zero State.
type ThresholdID int

// State is what the eviction manager remembers between steps. The zero State is the state at start-up.
// Step never modifies the State it is given; it returns a new one.
type State struct {
	// FirstObservedAt is when each currently met threshold was first observed met (grace timers).
	FirstObservedAt map[ThresholdID]time.Time
	// ConditionsLastObservedAt is when each node condition was last observed; entries are never deleted.
	ConditionsLastObservedAt map[signal.NodeCondition]time.Time
	// ThresholdsMet are the thresholds that had passed their grace period at the last step, ascending.
	ThresholdsMet []ThresholdID
	// Conditions are the reported node conditions (including the transition-period tail), by name.
	Conditions []signal.NodeCondition
	// LastObservations are the observations of the last step (for the stale-stats guard).
	LastObservations map[signal.Signal]signal.Observation
}

// Input is everything one step looks at.
type Input struct {
	// Now is the step's time (the kubelet's clock.Now() in synchronize).
	Now time.Time
	// Snapshot holds the node observations and the filesystem layout.
	Snapshot signal.Snapshot
	// Candidates are the active pods with their stats (Candidate.Stats; nil = no stats).
	Candidates []rank.Candidate
	// Config is the eviction configuration.
	Config threshold.Config
	// DisableLocalStorageCapacityIsolation turns off the local ephemeral-storage limit path (the
	// kubelet's localStorageCapacityIsolation=false). The zero value is the kubelet default (on).
	DisableLocalStorageCapacityIsolation bool
	// Semantics is the kubelet release (and its feature gates) to follow; the zero value is DefaultMinor
	// (1.37, the pinned release) with default gates.
	Semantics Semantics
	// AfterReclaim holds the observations taken after node-level reclaim (container and image garbage
	// collection). Leave it nil on the first call: if the step needs node-level reclaim it returns a
	// provisional Decision with NodeReclaim.Pending set. Run the actions, take a fresh snapshot and call
	// Step again from the same previous State with AfterReclaim set. An empty Snapshot models a failed
	// summary ("not satisfied").
	AfterReclaim *signal.Snapshot
}

// Path says which part of the eviction manager evicted a pod.
type Path string

// Eviction paths.
const (
	PathPressure     Path = "pressure"      // node-pressure eviction, one pod per step
	PathLocalStorage Path = "local-storage" // emptyDir sizeLimit / ephemeral-storage limits
)

// Reason is the pod status reason and the pod event reason of an eviction.
const Reason = "Evicted"

// Metric labels of the local-storage path (kubelet_evictions{eviction_signal}).
const (
	LabelEmptyDirLimit         = "emptydirfs.limit"
	LabelEphemeralPodLimit     = "ephemeralpodfs.limit"
	LabelEphemeralContainerLim = "ephemeralcontainerfs.limit"
)

// Event annotation keys on the pod's Evicted event.
const (
	AnnotationOffendingContainers      = "offending_containers"
	AnnotationOffendingContainersUsage = "offending_containers_usage"
	AnnotationOffendingPod             = "offending_pod"
	AnnotationOffendingPodUsage        = "offending_pod_usage"
	AnnotationStarvedResource          = "starved_resource"
)

// Grace is the kill grace period of an eviction.
type Grace struct {
	// Override is what the eviction manager passes to the pod worker: 1 on the hard and local-storage
	// paths, min(evictionMaxPodGracePeriod, terminationGracePeriodSeconds) on the soft path.
	Override int64
	// Effective is what the pod worker uses for a pod not yet terminating (calculateEffectiveGracePeriod).
	Effective int64
	// KillTimeoutSeconds is how long killPodNow waits: max(10, override + override/2).
	KillTimeoutSeconds int64
}

// PodCondition is the DisruptionTarget condition the kubelet sets on a pod evicted for pressure.
type PodCondition struct {
	Type    string // "DisruptionTarget"
	Status  string // "True"
	Reason  string // "TerminationByKubelet"
	Message string
}

// Eviction is one pod the step evicts.
type Eviction struct {
	UID, Namespace, Name string
	Path                 Path
	// Threshold is the acted-on threshold (pressure path only; -1 on the local-storage path).
	Threshold ThresholdID
	// Signal is the acted-on threshold's signal (pressure path only).
	Signal signal.Signal
	// MetricLabel is the eviction_signal label of kubelet_evictions.
	MetricLabel string
	// Message is the pod status message and the Evicted event message, byte for byte.
	Message string
	// Annotations are the Evicted event's annotations; nil on the local-storage path.
	Annotations map[string]string
	Grace       Grace
	// Condition is the DisruptionTarget condition; nil on the local-storage path.
	Condition *PodCondition
	// DecidedBy is the ranking key that put this pod ahead of the next one ("" when it was last or on
	// the local-storage path).
	DecidedBy rank.Key
	// Limit is the local ephemeral-storage limit the pod exceeds (local-storage path only).
	Limit *StorageLimit
}

// NodeEvent is an event on the Node object.
type NodeEvent struct {
	Type, Reason, Message string
}

// ReclaimAction is a node-level reclaim function.
type ReclaimAction string

// Node-level reclaim actions.
const (
	ContainerGC ReclaimAction = "containers GC" // delete all unused containers
	ImageGC     ReclaimAction = "image GC"      // delete unused images
)

// NodeReclaim is the node-level reclaim a disk-pressure step performs before evicting pods.
type NodeReclaim struct {
	Signal  signal.Signal
	Actions []ReclaimAction
	// Pending is true when the step needs post-reclaim observations (Input.AfterReclaim was nil).
	Pending bool
	// StillMet are the configured thresholds still met (with min-reclaim) after reclaim; empty means
	// reclaim succeeded and no pod is evicted.
	StillMet []ThresholdID
	// Succeeded reports that no configured threshold was met after reclaim.
	Succeeded bool
}

// Decision is the outcome of one step.
type Decision struct {
	// Conditions are the node conditions to report (sorted by name).
	Conditions []signal.NodeCondition
	// Met are the thresholds met this step before grace periods (plain or via min-reclaim), ascending.
	Met []ThresholdID
	// Acted are the thresholds acted on (grace passed, fresh stats), in the order the step used them.
	Acted []ThresholdID
	// Resource is the resource reclaimed ("" when nothing was acted on).
	Resource signal.Resource
	// NodeEvent is the "Attempting to reclaim" event, emitted every step that acts on a threshold.
	NodeEvent *NodeEvent
	// NodeReclaim is set when the acted-on signal has node-level reclaim functions.
	NodeReclaim *NodeReclaim
	// Ranking is the ranking the victim walk used (nil when no ranking happened).
	Ranking *rank.Ranking
	// Evictions are the pods evicted: several on the local-storage path, at most one otherwise.
	Evictions []Eviction
	// StatsAge is the age of the observation of each acted-on threshold's signal
	// (kubelet_eviction_stats_age_seconds), in Acted order; only set when ranking happened.
	StatsAge []StatsAge
	// Trace says why, in order.
	Trace Trace
}

// StatsAge is one observation of kubelet_eviction_stats_age_seconds.
type StatsAge struct {
	Signal signal.Signal
	Age    time.Duration
}
