package explain

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

const (
	mi = int64(1) << 20
	gi = int64(1) << 30
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func parse(t *testing.T, in threshold.Input) threshold.Config {
	t.Helper()
	cfg, err := threshold.ParseConfig(in)
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return cfg
}

func u64(v int64) *uint64 { return signal.Uint64(uint64(v)) }

func TestAllocatableMathOfTheEightyTwoPercentNode(t *testing.T) {
	// Spec §7: C = 16002Mi, kube-reserved 2662Mi, memory.available<100Mi → 13240Mi = 82.7 %.
	cfg := parse(t, threshold.Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true,
		KubeReserved: map[string]string{"memory": "2662Mi"}})
	r := Build(Input{Node: "n", Capacity: map[string]int64{"memory": 16002 * mi}, Config: cfg})
	if got, want := r.Allocatable["memory"], "13883146240"; got != want {
		t.Errorf("allocatable memory = %s, want %s (13240Mi)", got, want)
	}
	m := r.AllocatableMath[0]
	if m.PercentOfCapacity != 82.7 || m.HardEvictionThreshold != "memory.available<100Mi" || m.PodsCgroupLimit != "13988003840" {
		t.Errorf("memory math = %+v, want 82.7%% of capacity, reserved by memory.available<100Mi, pods cgroup limit 13340Mi", m)
	}
	var fires []string
	for _, f := range r.Thresholds {
		fires = append(fires, f.Explanation)
	}
	want := []string{
		"memory eviction starts when the pods' working set exceeds 12.9Gi, 82.7% of node memory capacity " +
			"(allocatableMemory.available<100Mi, hard: pods cgroup limit 13.0Gi − threshold 100Mi)",
		"memory eviction starts when the node's working set exceeds 15.5Gi, 99.4% of node memory capacity " +
			"(memory.available<100Mi, hard: node capacity 15.6Gi − threshold 100Mi)",
	}
	if diff := cmp.Diff(want, fires); diff != "" {
		t.Errorf("firing explanations (-want +got):\n%s", diff)
	}
}

func TestAllocatableMathOfTheDocsExample(t *testing.T) {
	// Spec §7 / A1: the docs say 28.5Gi and 88Gi; the kubelet computes 29196Mi and 94489280352 B.
	cfg := parse(t, threshold.Input{
		EvictionHard:    map[string]string{"memory.available": "500Mi", "nodefs.available": "10%"},
		EvictionHardSet: true,
		KubeReserved:    map[string]string{"cpu": "1", "memory": "2Gi", "ephemeral-storage": "1Gi"},
		SystemReserved:  map[string]string{"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "1Gi"},
	})
	r := Build(Input{Capacity: map[string]int64{"cpu": 16000, "memory": 32 * gi, "ephemeral-storage": 100 * gi}, Config: cfg})
	want := map[string]string{"cpu": "14500m", "memory": "30614224896", "ephemeral-storage": "94489280352"}
	if diff := cmp.Diff(want, r.Allocatable); diff != "" {
		t.Errorf("allocatable (-want +got):\n%s", diff)
	}
}

func TestNoStatsAndPIDKeysAreExplained(t *testing.T) {
	cfg := parse(t, threshold.Input{EvictionHard: map[string]string{"pid.available": "1000"}, EvictionHardSet: true})
	pod := func(name string, prio int32, procs *uint64) rank.Candidate {
		c := rank.Candidate{UID: name, Namespace: "ns", Name: name, Priority: prio, QOSClass: rank.QOSBestEffort}
		if procs != nil {
			c.Stats = &signal.PodStats{UID: name, ProcessCount: procs, Time: t0}
		}
		return c
	}
	in := Input{Node: "n", Now: t0, Config: cfg,
		Snapshot: signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
			signal.PIDAvailable: {Available: 500, Capacity: 32768, Time: t0}}},
		// Spec R5: P3 (priority -10, 5 procs), P2 (priority 0, 500 procs), P1 (priority 0, 50 procs).
		Candidates: []rank.Candidate{pod("p1", 0, u64(50)), pod("p2", 0, u64(500)), pod("p3", -10, u64(5))},
	}
	r := Build(in)
	var got [][2]string
	for _, v := range r.Kubelet.EvictionOrder {
		got = append(got, [2]string{v.Pod, v.Why})
	}
	want := [][2]string{
		{"ns/p3", "ns/p3 has the lower priority (-10 < 0)"},
		{"ns/p2", "both have priority 0; ns/p2 runs more processes (500 > 50)"},
		{"ns/p1", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pid order and reasons (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	if err := Text(&buf, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "The node was low on resource: pids. Threshold quantity: 1k, available: 500. ") {
		t.Errorf("text lacks the kubelet's pid message:\n%s", buf.String())
	}
}

func TestPodWithoutStatsRanksFirstAndSaysSo(t *testing.T) {
	cfg := parse(t, threshold.Input{EvictionHard: map[string]string{"memory.available": "100Mi"}, EvictionHardSet: true})
	withStats := rank.Candidate{UID: "a", Namespace: "ns", Name: "a", QOSClass: rank.QOSBestEffort,
		Stats: &signal.PodStats{UID: "a", MemoryWorkingSet: u64(gi), Time: t0}}
	noStats := rank.Candidate{UID: "z", Namespace: "ns", Name: "z", QOSClass: rank.QOSGuaranteed, MemoryRequest: gi}
	r := Build(Input{Now: t0, Config: cfg, Candidates: []rank.Candidate{withStats, noStats},
		Snapshot: signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
			signal.MemoryAvailable: {Available: 50 * mi, Capacity: 8 * gi, Time: t0}}}})
	first := r.Kubelet.EvictionOrder[0]
	if first.Pod != "ns/z" || first.DecidedBy != "no stats" || first.HasStats ||
		first.Why != "ns/z has no stats and ns/a has: a pod without stats goes first (QoS class is not a ranking key: this Guaranteed pod goes before the BestEffort one)" {
		t.Errorf("first = %+v, want the stat-less pod first with the no-stats reason", first)
	}
	if first.Message != "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. " {
		t.Errorf("message of a pod without stats = %q, want it to stop after the threshold segment", first.Message)
	}
}

func TestThresholdConfiguredAndDerivedIsShownOnce(t *testing.T) {
	// The kubelet keeps both a configured allocatableMemory.available<200Mi and the copy it derives from
	// memory.available<200Mi; explaining it twice would only confuse.
	cfg := parse(t, threshold.Input{EvictionHardSet: true,
		EvictionHard: map[string]string{"memory.available": "200Mi", "allocatableMemory.available": "200Mi"}})
	r := Build(Input{Capacity: map[string]int64{"memory": 8 * gi}, Config: cfg})
	var got []string
	for _, f := range r.Thresholds {
		got = append(got, f.Threshold)
	}
	var rows []string
	for _, s := range r.Signals {
		rows = append(rows, s.Threshold)
	}
	want := []string{"allocatableMemory.available<200Mi", "memory.available<200Mi"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("thresholds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, rows); diff != "" {
		t.Errorf("signal rows (-want +got):\n%s", diff)
	}
}
