package agent

import "context"

// pendingLedger is a ledger that may not have read its stored copy yet (loopbreaker.PersistentLedger
// started with NewPendingLedger, which run.go reads in the background so that an agent started while
// the API server is down acts at once).
type pendingLedger interface {
	Loaded() bool
	Load(ctx context.Context) error
}

// loadPendingLedger reads the stored ledger before a decision when the background read has not
// succeeded yet but the API answers (the pod list has synced): a sync under pressure right after a
// restart must credit the evictions its predecessor had in flight, or it evicts one of them again or
// the next pod as well (seen once under load). While the pod list has not synced it does nothing: the
// API is not known to answer, and the kill of an unlisted pod must not wait for it. Each request is
// bounded by the client's API timeout; a failure leaves the ledger pending and the decision as before.
func (a *Agent) loadPendingLedger(ctx context.Context, complete bool) {
	l, ok := a.Ledger.(pendingLedger)
	if !ok || l.Loaded() || a.PodsSynced == nil || !complete {
		return
	}
	if err := l.Load(ctx); err != nil {
		a.Metrics.errors.WithLabelValues(stageLedger).Inc()
		a.Log.Warn("ledger not read yet: deciding without the previous run's evictions", "err", err)
	}
}
