package decision_test

import (
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

func ExampleStep() {
	q := resource.MustParse("100Mi")
	cfg := threshold.Config{
		Thresholds:               []threshold.Threshold{{Signal: signal.MemoryAvailable, Operator: threshold.LessThan, Value: threshold.Value{Quantity: &q}}},
		PressureTransitionPeriod: 5 * time.Minute,
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pod := rank.Candidate{UID: "u1", Namespace: "default", Name: "web", QOSClass: rank.QOSBestEffort,
		Containers: []rank.Container{{Name: "app", Kind: rank.ContainerRegular}},
		Stats: &signal.PodStats{MemoryWorkingSet: signal.Uint64(300 << 20),
			Containers: []signal.ContainerStats{{Name: "app", MemoryWorkingSet: signal.Uint64(300 << 20)}}}}
	in := decision.Input{
		Now: now,
		Snapshot: signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
			signal.MemoryAvailable: {Available: 50 << 20, Capacity: 16 << 30, Time: now}}},
		Candidates: []rank.Candidate{pod},
		Config:     cfg,
	}
	_, d := decision.Step(decision.State{}, in)
	fmt.Println(d.Conditions)
	for _, e := range d.Evictions {
		fmt.Printf("%s/%s grace %ds: %q\n", e.Namespace, e.Name, e.Grace.Effective, e.Message)
	}
	// Output:
	// [MemoryPressure]
	// default/web grace 1s: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. Container app was using 300Mi, request is 0, has larger consumption of memory. "
}
