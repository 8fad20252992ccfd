package policy_test

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
)

// A Deployment's pod is evicted: new pods of its ReplicaSet avoid the node for the cooldown. Its
// replacement came back after that and is evicted again: a loop, and a longer avoidance.
func ExampleHistory() {
	web := policy.Workload{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-5d8f", UID: "rs1"}
	l := policy.NewHistory(policy.LoopConfig{Window: 10 * time.Minute, Cooldown: 5 * time.Minute, LoopCooldown: 30 * time.Minute})
	t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	l.Record(policy.HistoryEntry{UID: "p1", Namespace: "shop", Name: "web-1", Owner: web, Signal: "memory.available", At: t0})

	fmt.Println("settled:", l.Entries()[0].SettledAt != nil)
	fmt.Println("avoid until:", l.Avoidance(web).Until.Format(time.TimeOnly))
	loop, ok := l.Record(policy.HistoryEntry{UID: "p2", Namespace: "shop", Name: "web-2", Owner: web, Signal: "memory.available",
		At: t0.Add(7 * time.Minute), Created: t0.Add(time.Second)})
	fmt.Println("loop:", ok, loop.Owner, loop.Since, loop.Evictions)
	fmt.Println("avoid until:", loop.Until.Format(time.TimeOnly))
	// Output:
	// settled: false
	// avoid until: 15:05:00
	// loop: true ReplicaSet/shop/web-5d8f 7m0s 2
	// avoid until: 15:37:00
}
