package agent

import (
	"bytes"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/loopbreaker/loopbreakertest"
	"github.com/kube-pressure/pressure/internal/policy"
)

// A restarted agent whose background read of the stored ledger has not run yet: its predecessor
// evicted stress 10 s ago (in flight: the kubelet is still stopping it). Once the pod list has synced
// (the API answers), the first sync under pressure reads the ledger before it decides and credits that
// eviction, so nothing is requested again; before the fix it evicted stress a second time.
func TestAStoredLedgerNotReadYetIsReadBeforeTheFirstDecisionOnceThePodsAreListed(t *testing.T) {
	h := newHarness(t, nil)
	var store loopbreakertest.Store
	l := policy.NewHistory(policy.LoopConfig{})
	l.Record(policy.HistoryEntry{UID: "u-stress", Namespace: "default", Name: "stress", Rung: string(actuate.RungEviction), At: t0.Add(-10 * time.Second)})
	var b bytes.Buffer
	if err := loopbreaker.WriteLedger(&b, l); err != nil {
		t.Fatal(err)
	}
	store.Data = b.Bytes()
	ledger := loopbreaker.NewPendingLedger(&store, DefaultConfig("node-a").Ledger, nil)
	var calls []string
	h.agent.Ledger = ledger
	h.agent.Ladder = &actuate.Ladder{Evictor: &actuate.Evictor{Client: evictionAPI(&calls)}, Ledger: ledger, Clock: h.clock}
	h.agent.PodsSynced = func() bool { return true }
	scenario1(h, 1550*mi)
	res := h.sync(time.Second)
	if len(calls) != 0 {
		t.Errorf("eviction API calls %v, want none: the previous run's eviction of stress is in flight\ntrace:\n%s", calls, res.trace())
	}
	if !ledger.Loaded() {
		t.Error("the ledger is still not read after a sync with the pod list synced")
	}
}
