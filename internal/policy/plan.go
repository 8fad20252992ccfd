package policy

import (
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Plan is what one Step decided. Every action in it is independent of the others: the shell may carry
// them out in any order or concurrently, and reports each one's Outcome to the next Step.
type Plan struct {
	// Observed is false when the snapshot had no observation: nothing was decided.
	Observed bool
	Policy   Name
	// Thresholds are the thresholds acted on: the kubelet's (containerfs derived) and, for Pressure, the
	// hard ones raised by the headroom and every byte threshold with a minimum reclaim. Same length and
	// order as the kubelet's, so threshold IDs mean the same in both.
	Thresholds threshold.Config
	// Headroom is, for Pressure and ReclaimAware, the headroom of every hard threshold that has one, by
	// threshold: added, or withheld and why.
	Headroom []HeadroomNote
	// Leads are the hard memory thresholds the eviction lead raised at this step (Config.EvictionLead), in
	// threshold order.
	Leads []Lead
	// Watch is, per observed signal, the highest resolved threshold (the one crossed first), by signal:
	// what the notifiers arm at and the threshold gauges show.
	Watch []Watch
	// Pressure lists the signals under pressure on the raw snapshot (a threshold of Thresholds met, or
	// for a signal already under pressure met with its minimum reclaim), by signal.
	Pressure []SignalPressure
	// Conditions are the node conditions of Pressure, by name.
	Conditions []signal.NodeCondition
	// Reclaim is, for policy ReclaimAware, how each observed memory signal is seen (allocatable first):
	// the working set, the non-reclaimable estimate, the stall signals and what is acted on.
	Reclaim []ReclaimView
	// Reclaims are the reclaims to carry out before any eviction (the reclaim rung, rung.go), largest
	// first; each one's outcome goes back in Input.Reclaims.
	Reclaims []ReclaimRequest
	// ReclaimAvoidable are, when the rung is off, the reclaims that would have avoided acting on the
	// working set (and the eviction that follows), same order.
	ReclaimAvoidable []ReclaimRequest
	// Credits are the in-flight pods whose usage counts as available again (Pressure), by pod.
	Credits []Credit
	// Decision is the core's step (the kubelet's semantics) on Thresholds, the credited snapshot and the
	// candidates (Pressure: the pods not in flight).
	Decision decision.Decision
	// Target is the evict-to-target computation (nil when nothing is to be evicted, or for Kubelet).
	Target *Target
	// Walk is the victim walk: every ranked pod in rank order, taken or skipped and why (nil when
	// nothing is to be evicted).
	Walk []Considered
	// Evictions are the eviction requests to make, in rank order.
	Evictions []Eviction
	// Deferred are pods the walk chose that are not requested at this step, and why.
	Deferred []Deferral
	// Kills are the pods to SIGKILL on the node right after their eviction request.
	Kills []Kill
	// Taint is the wanted state of the node's pressure taint.
	Taint Taint
	// NodeEvents are the pressure episode's events of this step.
	NodeEvents []NodeEvent
	// APIBackoffUntil is the end of the API backoff (zero when none): the shell makes no API call that
	// can wait (taint, ledger) before it.
	APIBackoffUntil time.Time
	// Warnings are problems with the configuration found at this step (containerfs derivation).
	Warnings []string
	// Trace says why, in order: credits, target, walk, limits, kills, taint. The core's own trace is in
	// Decision.Trace.
	Trace decision.Trace
}

// Watch is the threshold a signal is watched at.
type Watch struct {
	Signal    signal.Signal
	Threshold decision.ThresholdID
	// Value is the resolved threshold (available must stay at or above it); Capacity its capacity.
	Value, Capacity int64
}

// SignalPressure is one signal under pressure.
type SignalPressure struct {
	Signal    signal.Signal
	Threshold decision.ThresholdID
	// Observed and Limit are the available amount and the resolved threshold, formatted ("298Mi",
	// "356Mi").
	Observed, Limit string
}

// PodRef names a pod.
type PodRef struct {
	UID, Namespace, Name string
}

// String is namespace/name.
func (p PodRef) String() string { return p.Namespace + "/" + p.Name }

// Credit is the usage of one in-flight pod counted as available again.
type Credit struct {
	Pod PodRef
	// Memory is the working set credited to the memory signals, bytes; PIDs the threads credited to
	// pid.available. Each is the lower of what the pod had when its eviction was requested (or when it
	// was first seen terminating) and what it has now.
	Memory, PIDs int64
	// Disk is the measured disk usage credited to each disk signal, by signal (the lower of what the
	// pod used when its flight started and what it uses now).
	Disk []DiskCredit
	// Why says what makes the pod in flight ("eviction requested 2s ago", "terminating until ...").
	Why string
}

// DiskCredit is the usage of one in-flight pod credited to one disk signal: bytes, or inodes for the
// inode signals.
type DiskCredit struct {
	Signal signal.Signal
	Amount int64
}

// Lead is a hard memory threshold raised by the eviction lead: the signal's fall (bytes per second, the
// slower of the last two intervals) and how far the threshold was raised above its level with headroom
// (to just above the available amount).
type Lead struct {
	Signal signal.Signal
	Rate   int64
	Raised int64
	// Why is the time-to-exhaustion reason, as the evictions at this threshold carry it.
	Why string
}

// LeadWhy returns the reason of the lead raise of sig at this step, "" when there was none.
func (p *Plan) LeadWhy(sig signal.Signal) string {
	for _, l := range p.Leads {
		if l.Signal == sig {
			return l.Why
		}
	}
	return ""
}

// HeadroomNote is the headroom added to one hard threshold by the Pressure policy, or why none was.
type HeadroomNote struct {
	Threshold decision.ThresholdID
	Signal    signal.Signal
	// Amount is the headroom added (0 when withheld), in the signal's unit.
	Amount int64
	// Withheld says why the headroom was not added ("" when it was): on a filesystem that holds images,
	// the raised threshold would reach the kubelet's image GC start.
	Withheld string
}

// Release is what evicting a pod is expected to free for the acted-on signal.
type Release struct {
	Amount int64
	// Known is false when the pod has no measurement for the signal (e.g. per-pod disk usage).
	Known bool
}

// Target is how much the acted-on signal must gain.
type Target struct {
	Signal    signal.Signal
	Threshold decision.ThresholdID
	// Available is the credited available amount; Goal the threshold plus its minimum reclaim (or, with
	// GoalWhy saying why, another goal); Need is Goal − Available (at least 1 when the threshold is met
	// only through minimum reclaim).
	Available, Goal, Need int64
	GoalWhy               string
	// Growth, when not 0, is a growth of usage other than page cache (bytes/s) that also ends the walk:
	// once the pods taken grow at least this fast, evicting them stops the fall (the backstop: half of
	// its scope's growth that the pods in flight do not explain, growth.go).
	Growth int64
	// GrowersOnly: the walk takes only the pods that grow (at least a quarter of Growth each): they
	// can cover Growth between them.
	GrowersOnly bool
	// GrowthRate is the growth not in flight that Growth is half of, bytes/s: the working set's fall
	// toward the kubelet's threshold (the kubelet kill, walk.go).
	GrowthRate int64
	// Max is the most pods the walk may take: Config.MaxEvictionsPerSync for the memory signals, 1 for
	// the disk, inode and PID signals (one victim per step, re-measured before the next); victims beyond the minute's
	// remaining requests are deferred, not dropped from the walk.
	Max int
}

// Considered is one pod of the victim walk.
type Considered struct {
	Pod PodRef
	// Rank is the 1-based position in the kubelet's ranking.
	Rank    int
	Release Release
	// Taken is true for a victim (requested or deferred); Skip says why a pod was not taken ("" for a
	// pod the walk did not reach or did not need).
	Taken bool
	Skip  string
}

// Eviction is one eviction request to make.
type Eviction struct {
	// Eviction is the core's eviction of the pod: threshold, signal, message, grace, annotations.
	decision.Eviction
	// Rank is the 1-based position in the kubelet's ranking.
	Rank    int
	Release Release
	// Hard reports a hard threshold (the only ones that may fall back to a DELETE or a kill).
	Hard bool
	// ObservedText and ThresholdText describe the acted-on signal on the raw snapshot ("298Mi", "356Mi").
	ObservedText, ThresholdText string
	// Why says why this pod, in words.
	Why string
	// Crossing is set on the first eviction of a pressure episode: the estimated time the threshold was
	// crossed (interpolated between the last observation above it and the first below).
	Crossing time.Time
}

// Ref returns the pod's reference.
func (e Eviction) Ref() PodRef { return PodRef{UID: e.UID, Namespace: e.Namespace, Name: e.Name} }

// Deferral is a victim not requested at this step.
type Deferral struct {
	Pod    PodRef
	Reason string
	// Until is when it may be requested (zero when unknown).
	Until time.Time
}

// Kill is a pod to SIGKILL on the node: the memory trend reaches zero available within ETA, closer than
// the eviction can complete.
type Kill struct {
	Pod    PodRef
	Signal signal.Signal
	ETA    time.Duration
}

// Taint is the wanted state of the node's pressure taint.
type Taint struct {
	Want bool
	// Value is the taint's value: the signal of the pressure episode ("pressure" when none is known).
	Value string
}

// NodeEventKind is a pressure episode event.
type NodeEventKind string

// Node events.
const (
	PressureStarted NodeEventKind = "PressureStarted"
	PressureEnded   NodeEventKind = "PressureEnded"
)

// NodeEvent is an event on the Node object.
type NodeEvent struct {
	Kind   NodeEventKind
	Signal signal.Signal
	// Observed is the available amount; Limit the threshold (PressureStarted only), formatted.
	Observed, Limit string
}

// Trace entry kinds of the policy (the core's are decision.Kind* in Plan.Decision.Trace).
const (
	KindOutcome  decision.Kind = "outcome"   // an outcome fed back: what it changed
	KindPressure decision.Kind = "pressure"  // a signal under pressure on the raw snapshot
	KindInFlight decision.Kind = "in-flight" // a pod in flight: why, and its credit
	KindTarget   decision.Kind = "target"    // the evict-to-target computation
	KindWalk     decision.Kind = "walk"      // one pod of the victim walk
	KindLimit    decision.Kind = "limit"     // a victim deferred: API backoff, minute limit
	KindKill     decision.Kind = "kill"      // the trend kill
	KindTaint    decision.Kind = "taint"     // the wanted taint
	KindReclaim  decision.Kind = "reclaim"   // a memory signal as policy ReclaimAware sees it; node-level disk reclaim
	KindHeadroom decision.Kind = "headroom"  // a disk threshold's headroom withheld at the image GC start
	KindLead     decision.Kind = "lead"      // a hard memory threshold raised by the eviction lead (or why not)
	// KindReclaimAction is the reclaim rung: a reclaim planned, held, its outcome, or why not.
	KindReclaimAction decision.Kind = "reclaim-action"
)

// trace appends to a Plan's trace.
type trace struct{ t *decision.Trace }

func (p *Plan) tr() trace { return trace{&p.Trace} }

func (t trace) add(k decision.Kind, subject, detail string) {
	*t.t = append(*t.t, decision.Entry{Kind: k, Subject: subject, Detail: detail})
}
