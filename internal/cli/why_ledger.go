package cli

// Reading pressure-agent's ledger for `why`: kept in this one file so a change of the ledger's format
// (internal/actuate) touches only this reader.

import (
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/why"
)

// ledgerEntries returns the agent's ledger entries on node for the pod uid; a ledger that cannot be
// decoded is a problem to report, not an error.
func ledgerEntries(node *corev1.Node, uid string) ([]why.LedgerEntry, string) {
	raw, ok := node.Annotations[loopbreaker.LedgerAnnotation]
	if !ok || uid == "" {
		return nil, ""
	}
	l, err := loopbreaker.ReadLedger(strings.NewReader(raw), policy.LoopConfig{})
	if err != nil {
		return nil, "node " + node.Name + ": annotation " + loopbreaker.LedgerAnnotation + ": " + err.Error()
	}
	var out []why.LedgerEntry
	for _, e := range l.Entries() {
		if string(e.UID) != uid {
			continue
		}
		owner := ""
		if e.Owner.Kind != "" {
			owner = e.Owner.Kind + "/" + e.Owner.Name
		}
		out = append(out, why.LedgerEntry{Signal: e.Signal, Rung: string(e.Rung), At: e.At, SettledAt: e.SettledAt, Owner: owner})
	}
	return out, ""
}

// ledgerEviction is one eviction the agent's ledger names: when it was carried out and by which rung
// (policy.RungEviction, policy.RungDelete after a PodDisruptionBudget refused, policy.RungCgroupKill).
type ledgerEviction struct {
	At   time.Time
	Rung string
}

// ledgerEvictions returns the evictions the agent's ledger on node names (by UID: its evictions still in
// the loop window or in flight); none when the node has no ledger. A ledger that cannot be decoded names
// none and is reported.
func ledgerEvictions(node *corev1.Node) (map[string]ledgerEviction, string) {
	raw, ok := node.Annotations[loopbreaker.LedgerAnnotation]
	if !ok {
		return nil, ""
	}
	l, err := loopbreaker.ReadLedger(strings.NewReader(raw), policy.LoopConfig{})
	if err != nil {
		return nil, "node " + node.Name + ": annotation " + loopbreaker.LedgerAnnotation + ": " + err.Error()
	}
	out := map[string]ledgerEviction{}
	for _, e := range l.Entries() {
		out[e.UID] = ledgerEviction{At: e.At, Rung: e.Rung}
	}
	return out, ""
}
