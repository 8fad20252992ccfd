package policy

import (
	"github.com/kube-pressure/pressure/internal/decision"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Input is everything one Step looks at.
type Input struct {
	// Now is the step's time.
	Now time.Time
	// Config is the policy's settings.
	Config Config
	// Kubelet is the kubelet's eviction configuration as read from its config file or /configz. Step
	// derives the containerfs thresholds from the first snapshot's filesystem layout, as the kubelet does
	// on its first synchronize, and keeps that layout in the State.
	Kubelet threshold.Config
	// KubeletSemantics is the node's kubelet release and feature gates (from the Node's
	// status.nodeInfo.kubeletVersion and /configz); the zero value is the pinned 1.37.
	KubeletSemantics decision.Semantics
	// Snapshot is the node as read at Now, raw (no credit applied). A snapshot without observations
	// means the node could not be read: Step then applies the outcomes and plans nothing.
	Snapshot signal.Snapshot
	// Pods are the pods bound to the node that are not in a terminal phase (terminating pods included),
	// each with its stats from Snapshot.Pods.
	Pods []Pod
	// InFlight are the evictions the agent's ledger holds as not settled: what a restarted agent knows
	// of its earlier requests. Those the in-flight rule (Config.InFlight) no longer holds for are ignored.
	InFlight []InFlight
	// Outcomes are what happened to the actions of earlier Plans since the last Step, in any order.
	Outcomes []Outcome
	// Reclaimable is what the kubelet's node-level reclaim (container and image GC) could free, as the
	// shell estimated it; nil when unknown (a disk step that asks for reclaim is then completed as
	// "reclaim freed nothing" and pods are evicted).
	Reclaimable *Reclaimable
	// ReclaimUnavailable says why the shell cannot reclaim a cgroup's memory ("" when it can): no
	// writable memory.reclaim or memory.force_empty (the chart option is off). The reclaim rung is then
	// off: the policy behaves as without it and says when a reclaim would have avoided an eviction.
	ReclaimUnavailable string
	// Reclaims are the outcomes of the reclaims of earlier Plans (Plan.Reclaims) since the last Step.
	Reclaims []ReclaimOutcome
	// Persisting predicts instead of deciding now: every met threshold is treated as met past its grace
	// period (kubectl pressure explain: "if the pressure persisted"). Leave it false in the agent.
	Persisting bool
}

// Reclaimable is what the kubelet's node-level reclaim could free, in bytes. Inodes are not estimated.
type Reclaimable struct {
	// UnusedImages are the images no active pod of the node uses: the kubelet's image GC deletes them
	// (from the image filesystem).
	UnusedImages int64
	// DeadContainerLogs are the logs of the node's terminated pods: the kubelet's container GC deletes
	// them (from nodefs).
	DeadContainerLogs int64
	// Source says how the estimate was made, for the trace ("node status images", ...).
	Source string
}

// Pod is one active pod.
type Pod struct {
	Candidate rank.Candidate
	// DeletionTimestamp is the pod's metadata.deletionTimestamp: zero when the pod is not terminating,
	// else the end of its grace period.
	DeletionTimestamp time.Time
	// Terminal marks a pod whose phase is Failed or Succeeded and that is still listed because its
	// deletion is not finished: its containers are gone, but the kubelet removes its volumes (an
	// emptyDir's files) before it lets the deletion finish. Never a candidate, under any policy; with a
	// deletion timestamp its measured usage is credited like a terminating pod's until it is gone.
	Terminal bool
}

// Terminating reports whether the pod has a deletion timestamp.
func (p Pod) Terminating() bool { return !p.DeletionTimestamp.IsZero() }

// InFlight is one eviction the ledger holds as not settled.
type InFlight struct {
	UID string
	// At is when the eviction was carried out.
	At time.Time
	// Rung is the rung that carried it out ("eviction-api", "delete", "cgroup-kill").
	Rung string
}

// Action is the kind of a planned action.
type Action string

// Actions.
const (
	ActionEvict Action = "evict"
	ActionKill  Action = "kill"
)

// Result is what happened to one planned action. The values are actuate's outcome names.
type Result string

// Results.
const (
	// ResultEvicted: the API accepted the eviction (or the DELETE of the PDB fallback).
	ResultEvicted Result = "evicted"
	// ResultGone: the pod was gone already (404, or another pod has its name).
	ResultGone Result = "gone"
	// ResultRefused: a PodDisruptionBudget refused the eviction.
	ResultRefused Result = "blocked-by-pdb"
	// ResultUnavailable: the API could not be reached or said "try later".
	ResultUnavailable Result = "unavailable"
	// ResultFailed: any other error.
	ResultFailed Result = "failed"
	// ResultKilled: the pod's processes were SIGKILLed on the node.
	ResultKilled Result = "killed"
	// ResultDryRun: dry-run, a "would evict" event and nothing else.
	ResultDryRun Result = "dry-run"
	// ResultNotAttempted: the shell did not carry the action out (shutting down, or the API found
	// unreachable by an earlier action of the same Plan).
	ResultNotAttempted Result = "not-attempted"
)

// Contact says what the API calls of an action learned about the API server.
type Contact string

// Contacts.
const (
	// ContactNone: the action made no API call (a kill, dry-run, not attempted).
	ContactNone Contact = ""
	// ContactAnswered: an API call got an answer (accepted, refused, not found, an error status other
	// than "try later"). It resets the API backoff.
	ContactAnswered Contact = "answered"
	// ContactUnavailable: an API call got no answer, or "try later" (429 without a PodDisruptionBudget
	// cause, 5xx, timeouts). It opens or extends the API backoff, even when a later rung (the cgroup
	// kill) carried the action out.
	ContactUnavailable Contact = "unavailable"
)

// Outcome is what happened to one action of a Plan.
type Outcome struct {
	UID    string
	Action Action
	Result Result
	API    Contact
	// At is when the action ended (the backoff runs from it).
	At time.Time
}

// ReclaimOutcome is what one planned reclaim (a ReclaimRequest) did.
type ReclaimOutcome struct {
	// UID is the request's pod ("" for the pods cgroup).
	UID string
	// Freed is how much the cgroup's memory usage fell during the write (bytes, at least 0).
	Freed int64
	// Err is the write's error ("" when it succeeded; EAGAIN from memory.reclaim when the kernel
	// reclaimed less than asked counts as success, with Freed what it did reclaim).
	Err string
	// At is when the write ended.
	At time.Time
}
