package policy

import (
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Read is what a shell read of the node, in the policy's terms: everything NewInput needs to build
// the Input of one Step. The agent fills it at every sync; kubectl pressure explain fills it from a
// snapshot or a live node; the simulator from its model. A piece of data a reader could not get is
// left unknown (a nil pointer), never zero: NewInput then says what it assumed instead.
type Read struct {
	// Now is the step's time.
	Now time.Time
	// Config is the policy's settings; Kubelet the kubelet's eviction configuration before the
	// containerfs derivation; KubeletSemantics the node's kubelet release (zero: the pinned 1.37).
	Config           Config
	Kubelet          threshold.Config
	KubeletSemantics decision.Semantics
	// Snapshot is the node as read at Now, raw (no credit applied).
	Snapshot signal.Snapshot
	// Pods are the pods listed as bound to the node, in any phase, each with its stats from
	// Snapshot.Pods (Terminal set for the phases Failed and Succeeded). NewInput keeps the active pods
	// and the terminal pods whose deletion is not finished (their volumes are credited until they are
	// gone); a terminal pod without a deletion timestamp is dropped.
	Pods []Pod
	// Ledger is the agent's eviction ledger as read (the node's ledger annotation, or the running
	// agent's own); nil when it could not be read: nothing is then counted in flight from it.
	Ledger *Ledger
	// Reclaimable is the estimate of what the kubelet's node-level reclaim could free; nil when unknown
	// (the policy then counts the reclaim as freeing nothing).
	Reclaimable *Reclaimable
	// ReclaimUnavailable says why the shell cannot reclaim a cgroup's memory ("" when it can).
	ReclaimUnavailable string
	// Outcomes and Reclaims are what happened to the actions of the previous Plan.
	Outcomes []Outcome
	Reclaims []ReclaimOutcome
	// Persisting predicts "if the pressure persisted" (kubectl pressure explain); false in the agent.
	Persisting bool
}

// Ledger is the agent's memory of its recent evictions on the node, as read from its store.
type Ledger struct {
	// Evictions are the evictions recorded, settled or not, in any order.
	Evictions []LedgerEviction
}

// LedgerEviction is one eviction the ledger recorded.
type LedgerEviction struct {
	UID string
	// At is when the eviction was carried out; Rung the rung that carried it out.
	At   time.Time
	Rung string
	// Settled reports that the agent saw the pod gone: it is no longer in flight.
	Settled bool
}

// NewInput builds the Input of one Step from what was read: the one way the agent, explain and the
// simulator turn a read of the node into the policy's input. It also returns what the read did not
// know and what the Input assumes instead, one line each (empty when the read was complete), for
// explain and simulate to say.
func NewInput(r Read) (Input, []string) {
	in := Input{Now: r.Now, Config: r.Config, Kubelet: r.Kubelet, KubeletSemantics: r.KubeletSemantics, Snapshot: r.Snapshot,
		Outcomes: r.Outcomes, Reclaims: r.Reclaims, Reclaimable: r.Reclaimable, ReclaimUnavailable: r.ReclaimUnavailable,
		Persisting: r.Persisting}
	for _, p := range r.Pods {
		if p.Terminal && !p.Terminating() {
			continue // finished and not being deleted: nothing of it is used or credited
		}
		in.Pods = append(in.Pods, p)
	}
	var unknown []string
	if r.Ledger == nil {
		unknown = append(unknown, "the agent's eviction ledger: unknown, no pod is counted in flight from it "+
			"(the running agent credits the pods whose eviction it requested)")
	} else {
		for _, e := range r.Ledger.Evictions {
			if !e.Settled {
				in.InFlight = append(in.InFlight, InFlight{UID: e.UID, At: e.At, Rung: e.Rung})
			}
		}
	}
	if r.Reclaimable == nil && hasDiskThreshold(r.Kubelet) {
		unknown = append(unknown, "what the kubelet's image and container GC could free: unknown, counted as nothing "+
			"(a disk threshold evicts pods without waiting for the kubelet's reclaim)")
	}
	return in, unknown
}

// hasDiskThreshold reports whether the kubelet configuration has a threshold on a filesystem signal.
func hasDiskThreshold(c threshold.Config) bool {
	for _, t := range c.Thresholds {
		if !t.Signal.IsMemory() && t.Signal != signal.PIDAvailable && !t.Inert() {
			return true
		}
	}
	return false
}
