package decision

import (
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func at(seconds int) time.Time { return t0.Add(time.Duration(seconds) * time.Second) }

func u64(v int64) *uint64 { return signal.Uint64(uint64(v)) }

// config parses an eviction configuration through package threshold; pods are not enforced unless
// enforce is given.
func config(t *testing.T, in threshold.Input) threshold.Config {
	t.Helper()
	in.EvictionHardSet = in.EvictionHardSet || in.EvictionHard != nil
	in.EnforceNodeAllocatableSet = true
	cfg, err := threshold.ParseConfig(in)
	if err != nil {
		t.Fatalf("ParseConfig(%+v) = %v", in, err)
	}
	return cfg
}

func hard(t *testing.T, kv ...string) threshold.Config {
	t.Helper()
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return config(t, threshold.Input{EvictionHard: m})
}

func snap(obs map[signal.Signal]signal.Observation) signal.Snapshot {
	return signal.Snapshot{Observations: obs}
}

func memObs(available, capacity int64, when time.Time) signal.Snapshot {
	return snap(map[signal.Signal]signal.Observation{
		signal.MemoryAvailable: {Available: available, Capacity: capacity, Time: when}})
}

// memPod is a pod with one container named after the pod: memory request (0 = none) and working set.
func memPod(name string, request, usage int64) rank.Candidate {
	qos := rank.QOSBurstable
	if request == 0 {
		qos = rank.QOSBestEffort
	}
	return rank.Candidate{
		UID: "uid-" + name, Namespace: "default", Name: name, QOSClass: qos, MemoryRequest: request,
		TerminationGracePeriodSeconds: rank.Int64(30),
		Containers: []rank.Container{{Name: name, Kind: rank.ContainerRegular,
			MemoryRequest: rank.Amount{Value: request}}},
		Stats: &signal.PodStats{UID: "uid-" + name, MemoryWorkingSet: u64(usage),
			Containers: []signal.ContainerStats{{Name: name, MemoryWorkingSet: u64(usage)}}},
	}
}

// r1Pods are the pods of spec R1: a (burstable, 100Mi request, 2Gi usage), b (best effort, 300Mi),
// c (guaranteed 1Gi, 900Mi).
func r1Pods() []rank.Candidate {
	c := memPod("c", gi, 900*mi)
	c.QOSClass = rank.QOSGuaranteed
	return []rank.Candidate{c, memPod("b", 0, 300*mi), memPod("a", 100*mi, 2*gi)}
}

func evictedNames(d Decision) []string {
	var out []string
	for _, e := range d.Evictions {
		out = append(out, e.Name)
	}
	return out
}
