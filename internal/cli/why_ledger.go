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

// ledgerEvictions returns when the agent's ledger on node says it evicted each pod it names (by UID: its
// evictions still in the loop window or in flight); none when the node has no ledger. A ledger that
// cannot be decoded names none and is reported.
func ledgerEvictions(node *corev1.Node) (map[string]time.Time, string) {
	raw, ok := node.Annotations[loopbreaker.LedgerAnnotation]
	if !ok {
		return nil, ""
	}
	l, err := loopbreaker.ReadLedger(strings.NewReader(raw), policy.LoopConfig{})
	if err != nil {
		return nil, "node " + node.Name + ": annotation " + loopbreaker.LedgerAnnotation + ": " + err.Error()
	}
	out := map[string]time.Time{}
	for _, e := range l.Entries() {
		out[e.UID] = e.At
	}
	return out, ""
}
