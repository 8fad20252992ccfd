package explain_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/explain"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

func ExampleBuild() {
	q := resource.MustParse("100Mi")
	cfg := threshold.Config{Thresholds: []threshold.Threshold{
		{Signal: signal.MemoryAvailable, Operator: threshold.LessThan, Value: threshold.Value{Quantity: &q}}}}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := func(name, qos string, request, usage uint64) rank.Candidate {
		return rank.Candidate{UID: name, Namespace: "default", Name: name, QOSClass: qos, MemoryRequest: int64(request),
			Containers: []rank.Container{{Name: name, MemoryRequest: rank.Amount{Value: int64(request)}}},
			Stats: &signal.PodStats{UID: name, MemoryWorkingSet: signal.Uint64(usage), Time: now,
				Containers: []signal.ContainerStats{{Name: name, MemoryWorkingSet: signal.Uint64(usage)}}}}
	}
	r := explain.Build(explain.Input{
		Node: "node-1", Now: now, Config: cfg,
		Capacity: map[string]int64{"memory": 16 << 30},
		Snapshot: signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
			signal.MemoryAvailable: {Available: 50 << 20, Capacity: 16 << 30, Time: now}}},
		Candidates: []rank.Candidate{pod("b", rank.QOSBestEffort, 0, 300<<20), pod("a", rank.QOSBurstable, 100<<20, 2<<30)},
	})
	for _, v := range r.Kubelet.EvictionOrder {
		fmt.Printf("%s (%s) before next by %q\n", v.Pod, v.QOSClass, v.DecidedBy)
	}
	fmt.Printf("%q\n", r.Kubelet.EvictionOrder[0].Message)
	// Output:
	// default/a (Burstable) before next by "usage above request"
	// default/b (BestEffort) before next by ""
	// "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container a was using 2Gi, request is 100Mi, has larger consumption of memory. "
}
