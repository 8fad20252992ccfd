package actuate

import (
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/policy"
)

// PodRef names one pod incarnation: namespace, name and UID.
type PodRef struct {
	Namespace string
	Name      string
	UID       types.UID
}

// Request is one eviction the agent wants.
type Request struct {
	Pod PodRef
	// Owner is the pod's controller (ControllerOf); the zero Owner for a bare pod. New pods of an
	// Avoidable owner avoid the node after the eviction.
	Owner policy.Workload
	// Created is the pod's creation time: an evicted pod created after an earlier eviction of its owner
	// here is a replacement that came back (loop detection).
	Created time.Time
	// GracePeriodSeconds is the kill grace computed by the decision (1 for hard thresholds).
	GracePeriodSeconds int64
	// Hard reports a hard threshold (grace period 0). Only hard evictions may fall back to DELETE and
	// to the cgroup kill.
	Hard bool
	// Signal, Observed and Threshold describe the pressure, e.g. "memory.available", "80Mi", "100Mi".
	Signal    string
	Observed  string
	Threshold string
	// Rank is the pod's 1-based position in the victim ranking; DecidedBy the ranking key that put it
	// ahead of the next pod.
	Rank      int
	DecidedBy string
	// Message is the decision's eviction message (the kubelet's wording).
	Message string
	// Annotations are the event annotations (offending_containers, offending_containers_usage,
	// starved_resource, ...); copied onto the pod event.
	Annotations map[string]string
}

// Outcome classifies one answer of the API (or of the node).
type Outcome string

// Outcomes.
const (
	OutcomeEvicted      Outcome = "evicted"        // the API accepted the eviction or deletion
	OutcomeGone         Outcome = "gone"           // 404, or the UID precondition failed: nothing to do, never retried
	OutcomeBlockedByPDB Outcome = "blocked-by-pdb" // 429 with a DisruptionBudget cause
	OutcomeUnavailable  Outcome = "unavailable"    // API unreachable, timing out or throttling: retryable
	OutcomeFailed       Outcome = "failed"         // any other error
	OutcomeKilled       Outcome = "killed"         // the pod's processes were SIGKILLed on the node
	OutcomeDryRun       Outcome = "dry-run"        // dry-run: a "would evict" event, nothing else
)

// Done reports whether the pod is (or is about to be) gone, so the agent must not act on it again.
func (o Outcome) Done() bool {
	switch o {
	case OutcomeEvicted, OutcomeGone, OutcomeKilled:
		return true
	}
	return false
}

// Retryable reports whether asking again later may succeed.
func (o Outcome) Retryable() bool {
	return o == OutcomeUnavailable || o == OutcomeBlockedByPDB
}

// Rung is a step of the escalation ladder (policy.Rung).
type Rung = policy.Rung

// Rungs, in escalation order.
const (
	RungNone       = policy.RungNone
	RungEviction   = policy.RungEviction
	RungDelete     = policy.RungDelete
	RungCgroupKill = policy.RungCgroupKill
	RungRecheck    = policy.RungRecheck
)

// Attempt is one call of the ladder.
type Attempt struct {
	Rung    Rung
	Outcome Outcome
	// Err is the error of a call that did not succeed (nil for evicted).
	Err error
}

// Result is what the ladder did for one Request.
type Result struct {
	// Outcome is the outcome of the last attempt (or dry-run / in-flight when nothing was attempted).
	Outcome Outcome
	// Rung is the rung of the last attempt: the one used when Outcome.Done().
	Rung Rung
	// Attempts lists every call in order.
	Attempts []Attempt
	// Killed is the number of processes SIGKILLed by the cgroup rung.
	Killed int
	// EvictionLoop is set when this eviction closed an eviction loop of the owner (policy.History.Record).
	EvictionLoop *policy.EvictionLoop
	// Why is the policy's reason for each move of the ladder, in order (policy.Move.Why).
	Why []string
	// Continuing reports a result so far: the ladder goes on in the background (Ladder.EvictThen) and
	// its final result comes later.
	Continuing bool
}

// Err returns the error of the last attempt, or nil.
func (r Result) Err() error {
	if len(r.Attempts) == 0 {
		return nil
	}
	return r.Attempts[len(r.Attempts)-1].Err
}

func (r *Result) add(a Attempt) {
	r.Attempts = append(r.Attempts, a)
	r.Outcome, r.Rung = a.Outcome, a.Rung
}
