package loopbreaker

import "github.com/kube-pressure/pressure/internal/policy"

// PolicyLedger converts the ledger's entries into the policy's view of them (policy.Read.Ledger): which
// evictions are recorded, when, by which rung, and whether they settled.
func PolicyLedger(entries []Entry) *policy.Ledger {
	l := &policy.Ledger{Evictions: make([]policy.LedgerEviction, 0, len(entries))}
	for _, e := range entries {
		l.Evictions = append(l.Evictions, policy.LedgerEviction{UID: string(e.UID), At: e.At, Rung: e.Rung, Settled: e.SettledAt != nil})
	}
	return l
}

// Foresee returns what carrying out the eviction e would do to its owner's avoidance of the node, by
// the same rules as the ladder (Avoid before the eviction, Record after it): the avoidance then in
// force (zero for an owner that is not Avoidable), and the loop when e closes one. l is not changed.
func (l *Ledger) Foresee(e Entry) (Avoidance, EvictionLoop, bool) {
	c := &Ledger{policy: l.policy, entries: l.Entries(), avoid: append([]Avoidance(nil), l.avoid...)}
	c.Avoid(e.Owner, e.At.Add(c.policy.Cooldown), false)
	loop, ok := c.Record(e)
	return c.Avoidance(e.Owner), loop, ok
}
