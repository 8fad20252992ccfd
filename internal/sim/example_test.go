package sim_test

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/sim"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// A pod leaking 10Mi/s in a 2Gi pods cgroup: the kubelet, its memcg notifier on, evicts it when less
// than 200Mi are left.
func ExampleSimulate() {
	cfg, err := threshold.ParseConfig(threshold.Input{EvictionHardSet: true,
		EvictionHard: map[string]string{"allocatableMemory.available": "200Mi"}, KernelMemcgNotification: true})
	if err != nil {
		panic(err)
	}
	leak := sim.ModelPod{Candidate: rank.Candidate{UID: "u1", Namespace: "default", Name: "leak", QOSClass: rank.QOSBestEffort,
		Containers: []rank.Container{{Name: "leak"}}}, Usage: sim.Ramp{Start: 1700 << 20, Rate: 10 << 20}}
	m := sim.Model{Start: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Duration: time.Minute, NodeCapacity: 8 << 30,
		PodsCapacity: 2 << 30, Pods: []sim.ModelPod{leak}, PodStatsInterval: 10 * time.Second, PodStatsMaxInterval: 20 * time.Second}
	res := sim.Simulate(m.World(rand.New(rand.NewSource(1))), sim.Options{Kubelet: cfg, Timing: sim.DefaultTiming()})
	for _, e := range res.Runs[0].Events {
		if e.Kind == sim.KindEvict {
			fmt.Println(sim.FormatOffset(time.Duration(e.Offset)), e.Actor, "evicts", e.Eviction.Pod)
		}
	}
	// Output: +0:14.9 kubelet evicts default/leak
}
