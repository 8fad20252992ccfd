package sim

import (
	"math/rand"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/threshold"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

const mi = 1 << 20

func config(t *testing.T, in threshold.Input) threshold.Config {
	t.Helper()
	cfg, err := threshold.ParseConfig(in)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// hard200 is the e2e node's configuration: memory.available and allocatableMemory.available < 200Mi,
// the memcg notifier on, transition period 20s.
func hard200(t *testing.T) threshold.Config {
	p := 20 * time.Second
	return config(t, threshold.Input{EvictionHardSet: true, EvictionHard: map[string]string{"memory.available": "200Mi",
		"allocatableMemory.available": "200Mi"}, EnforceNodeAllocatableSet: true, EnforceNodeAllocatable: []string{"pods"},
		EvictionPressureTransitionPeriod: &p, KernelMemcgNotification: true})
}

func pod(name string, request int64, priority int32, usage Ramp) ModelPod {
	qos := rank.QOSBurstable
	if request == 0 {
		qos = rank.QOSBestEffort
	}
	return ModelPod{Candidate: rank.Candidate{UID: "uid-" + name, Namespace: "default", Name: name, QOSClass: qos,
		Priority: priority, MemoryRequest: request,
		Containers: []rank.Container{{Name: name, MemoryRequest: rank.Amount{Value: request}}}}, Usage: usage}
}

func model(pods ...ModelPod) Model {
	return Model{Start: t0, Duration: 2 * time.Minute, NodeCapacity: 8 << 30, PodsCapacity: 2 << 30,
		System: Ramp{Start: 1 << 30}, Pods: pods, PodStatsInterval: 10 * time.Second, PodStatsMaxInterval: 20 * time.Second}
}

func simulate(t *testing.T, m Model, o Options, seed int64) Result {
	t.Helper()
	if o.Timing == (Timing{}) {
		o.Timing = DefaultTiming()
	}
	o.Seed = seed
	return Simulate(m.World(rand.New(rand.NewSource(seed))), o)
}

// evicted is one eviction of a run: the pod, the offset and who.
type evicted struct {
	pod string
	at  time.Duration
	by  Actor
}

func evictions(res Result, runName string) []evicted {
	var out []evicted
	for _, run := range res.Runs {
		if run.Name != runName {
			continue
		}
		for _, e := range run.Events {
			if e.Kind == KindEvict {
				out = append(out, evicted{e.Eviction.Pod, time.Duration(e.Offset), e.Actor})
			}
		}
	}
	return out
}

func events(res Result, runName string, kind Kind) []Event {
	var out []Event
	for _, run := range res.Runs {
		for _, e := range run.Events {
			if run.Name == runName && e.Kind == kind {
				out = append(out, e)
			}
		}
	}
	return out
}

func noNotifier(cfg threshold.Config) threshold.Config {
	cfg.KernelMemcgNotification = false
	return cfg
}
