package actuate_test

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/actuate"
)

// A replacement of a just-evicted Deployment pod lands on the node again: the ledger reports a loop
// and holds the taint for the cooldown.
func ExampleLedger() {
	web := actuate.Owner{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "d1"}
	l := actuate.NewLedger(actuate.LedgerPolicy{Window: 10 * time.Minute, Cooldown: 5 * time.Minute})
	t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	l.Record(actuate.Entry{UID: "p1", Namespace: "shop", Name: "web-1", Owner: web, Signal: "memory.available", At: t0})

	fmt.Println("in flight:", l.InFlight("p1", t0.Add(time.Second)))
	loop, ok := l.Observe(actuate.Arrival{UID: "p2", Namespace: "shop", Name: "web-2", Owner: web}, t0.Add(40*time.Second))
	fmt.Println("loop:", ok, loop.Owner, loop.Since, loop.Signal)
	hold, held := l.Hold(t0.Add(time.Minute))
	fmt.Println("taint:", held, hold.Signal, hold.Until.Format(time.TimeOnly))
	// Output:
	// in flight: true
	// loop: true Deployment/shop/web 40s memory.available
	// taint: true memory.available 15:05:40
}
