package why

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Evidence is everything collected about one pod. Absent facts are nil or empty, never guessed.
type Evidence struct {
	// Now is the reference time (when the evidence was collected).
	Now time.Time
	// Query is what the user asked for: a pod name or UID, with its namespace.
	Query string
	// Namespace is the namespace searched.
	Namespace string
	// Pod is the pod as the API serves it; nil when it no longer exists.
	Pod *Pod
	// Events are the Events whose involved object is the pod (by UID, or by name for a gone pod).
	Events []Event
	// NodeEvents are the Events on the pod's node (SystemOOM, NodeShutdown, pressure-agent's ...).
	NodeEvents []Event
	// OwnerEvents are the Events on the pod's owner or workload (SuccessfulDelete, the janitor's evidence).
	OwnerEvents []Event
	// Janitor is the janitor's evidence record of the pod (from its EvictedPodDeleted Event); nil if none.
	Janitor *JanitorRecord
	// Ledger holds the pressure-agent ledger entries for the pod's UID on its node.
	Ledger []LedgerEntry
	// Node is the pod's node: capacity and kubelet eviction configuration; nil when unknown.
	Node *Node
	// Victim is the pod as the decision core sees it (nil when the pod is gone); its Stats are filled
	// from the eviction message when the pod was evicted.
	Victim *rank.Candidate
	// Neighbours are the other active pods on the node, with their stats at collection time.
	Neighbours []rank.Candidate
	// NodePods are the other pods on the node (any phase), for their container terminations.
	NodePods []Pod
	// Checked lists what was looked at, in order (shown when the verdict is unknown).
	Checked []string
	// Problems are collection errors that leave a verdict possible (an endpoint that did not answer).
	Problems []string
}

// Pod is the part of a v1.Pod the verdict reads.
type Pod struct {
	Namespace, Name, UID, Node string
	Phase, Reason, Message     string
	QOSClass                   string
	Priority                   int32
	// DeletionTimestamp is set while the pod is being deleted.
	DeletionTimestamp *time.Time
	OwnerKind         string
	OwnerName         string
	Conditions        []Condition
	Containers        []Container
}

// Condition is a pod condition.
type Condition struct {
	Type, Status, Reason, Message string
	At                            time.Time
}

// Container is one regular container of the pod with its memory settings and terminations.
type Container struct {
	Name string
	// MemoryRequest and MemoryLimit in bytes; 0 when unset.
	MemoryRequest, MemoryLimit int64
	RestartCount               int32
	HasLivenessProbe           bool
	// Terminated is the current state when terminated; LastTerminated is lastState.terminated.
	Terminated, LastTerminated *Termination
}

// Termination is a container's terminated state.
type Termination struct {
	Reason     string
	ExitCode   int32
	Message    string
	StartedAt  time.Time
	FinishedAt time.Time
}

// Event is a core/v1 Event.
type Event struct {
	Namespace, Name string
	// Kind, Object and ObjectUID name the involved object.
	Kind, Object, ObjectUID string
	Type, Reason, Message   string
	// Source is the reporting component (source.component or reportingController).
	Source string
	Host   string
	First  time.Time
	Last   time.Time
	Count  int32
	// Annotations are the Event's own annotations (the kubelet and the agent put eviction facts there).
	Annotations map[string]string
}

// JanitorRecord is the evidence pressure-janitor wrote on the owner before deleting the pod.
type JanitorRecord struct {
	Pod, Namespace, UID, Owner, Node string
	Phase, Reason, Message           string
	EvictedAt                        time.Time
	EvictedAtSource                  string
	QOS                              string
	Requests, Limits                 map[string]string
	// Event names the Event the record came from.
	Event string
	// Verified is true when the Event says pressure-janitor wrote it: name pressure-janitor.<...> and
	// source (and reporting component, when set) pressure-janitor. The chart's admission policy
	// (pressure-janitor-evidence) refuses those to every other user, so anyone else who may create
	// Events can only write an unverified record. Source is the Event's source component.
	Verified bool
	Source   string
}

// janitorLabel names the Event of a janitor record in a verdict's evidence, saying when it is not
// verified.
func (j *JanitorRecord) janitorLabel(what string) string {
	if j.Verified {
		return "Event " + j.Event + what
	}
	return "Event " + j.Event + what + fmt.Sprintf(" UNVERIFIED: source %q, not written as pressure-janitor; anyone who may create Events could have", j.Source)
}

// LedgerEntry is one eviction in the agent's ledger on the node.
type LedgerEntry struct {
	Signal, Rung string
	At           time.Time
	SettledAt    *time.Time
	Owner        string
}

// Node is what is known about the pod's node.
type Node struct {
	Name string
	// Capacity is status.capacity in bytes (memory, ephemeral-storage), millicores (cpu) or counts.
	Capacity map[string]int64
	// Config is the kubelet's eviction configuration (from /configz); nil when it could not be read.
	Config *threshold.Config
	// ConfigSource says where Config came from, e.g. "GET /api/v1/nodes/n/proxy/configz (now)".
	ConfigSource string
}
