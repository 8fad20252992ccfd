package policy_test

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// A node whose pods cgroup has 298Mi available: below pressure-agent's 356Mi (the kubelet's 100Mi plus
// 256Mi of headroom), above the kubelet's own threshold. The step plans the eviction of the one pod
// whose working set covers the need; its outcome goes into the next step.
func ExampleStep() {
	kubelet, _ := threshold.ParseConfig(threshold.Input{EvictionHardSet: true, EvictionHard: map[string]string{"memory.available": "100Mi"}})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ws := func(v uint64) *signal.PodStats { return &signal.PodStats{MemoryWorkingSet: &v, Time: now} }
	in := policy.Input{
		Now: now, Config: policy.DefaultConfig(), Kubelet: kubelet,
		Snapshot: signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
			signal.MemoryAvailable:            {Available: 6 << 30, Capacity: 8 << 30, Time: now},
			signal.AllocatableMemoryAvailable: {Available: 298 << 20, Capacity: 2 << 30, Time: now},
		}},
		Pods: []policy.Pod{
			{Candidate: rank.Candidate{UID: "u1", Namespace: "shop", Name: "cache", QOSClass: rank.QOSBestEffort, Stats: ws(1300 << 20)}},
			{Candidate: rank.Candidate{UID: "u2", Namespace: "shop", Name: "web", QOSClass: rank.QOSBestEffort, Stats: ws(300 << 20)}},
		},
	}
	st, plan := policy.Step(policy.State{}, in)
	for _, e := range plan.Evictions {
		fmt.Printf("evict %s (rank %d): %s\n", e.Ref(), e.Rank, e.Why)
	}
	fmt.Printf("taint wanted: %t\n", plan.Taint.Want)

	in.Now = now.Add(time.Second)
	in.Outcomes = []policy.Outcome{{UID: "u1", Action: policy.ActionEvict, Result: policy.ResultEvicted, API: policy.ContactAnswered, At: in.Now}}
	_, plan = policy.Step(st, in)
	fmt.Printf("next step: %d evictions, %s credited\n", len(plan.Evictions), plan.Credits[0].Pod)
	// Output:
	// evict shop/cache (rank 1): rank 1, frees 1.3Gi (taken so far: 1.3Gi of the 158Mi needed)
	// taint wanted: true
	// next step: 0 evictions, shop/cache credited
}
