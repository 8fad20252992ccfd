package policy

import (
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

func TestPodStatsDue(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	watch := []Watch{
		{Signal: signal.AllocatableMemoryAvailable, Value: 456 << 20, Capacity: 2 << 30},
		{Signal: signal.NodeFsAvailable, Value: 10 << 30, Capacity: 100 << 30},
	}
	far := map[signal.Signal]signal.Observation{
		signal.AllocatableMemoryAvailable: {Available: 1200 << 20, Capacity: 2 << 30},
		signal.NodeFsAvailable:            {Available: 60 << 30, Capacity: 100 << 30},
	}
	with := func(sig signal.Signal, avail int64) map[signal.Signal]signal.Observation {
		out := map[signal.Signal]signal.Observation{}
		for k, v := range far {
			out[k] = v
		}
		o := out[sig]
		o.Available = avail
		out[sig] = o
		return out
	}
	stall := []signal.Pressure{{Scope: "node", Resource: "memory", Some: signal.PressureLine{Avg10: 0.4}}}
	cpuStall := []signal.Pressure{{Scope: "node", Resource: "cpu", Some: signal.PressureLine{Avg10: 30}}}
	for _, tc := range []struct {
		name    string
		st      State
		obs     map[signal.Signal]signal.Observation
		psi     []signal.Pressure
		last    time.Time
		maxAge  time.Duration
		want    string
		noWatch bool
	}{
		{"far from every threshold with fresh stats: reused", State{}, far, nil, t0.Add(-10 * time.Second), time.Minute, "", false},
		{"a cpu stall is not a memory stall: reused", State{}, far, cpuStall, t0.Add(-10 * time.Second), time.Minute, "", false},
		{"max age 0 reads on every sync, like the kubelet", State{}, far, nil, t0.Add(-time.Second), 0, PodStatsEverySync, false},
		{"never read: read", State{}, far, nil, time.Time{}, time.Minute, PodStatsFirst, false},
		{"stats as old as the max age: read", State{}, far, nil, t0.Add(-time.Minute), time.Minute, PodStatsStale, false},
		{"allocatable below twice its threshold: read", State{}, with(signal.AllocatableMemoryAvailable, 900<<20), nil,
			t0.Add(-10 * time.Second), time.Minute, PodStatsNear, false},
		{"allocatable exactly twice its threshold: reused", State{}, with(signal.AllocatableMemoryAvailable, 912<<20), nil,
			t0.Add(-10 * time.Second), time.Minute, "", false},
		{"a disk signal near its threshold: read", State{}, with(signal.NodeFsAvailable, 15<<30), nil,
			t0.Add(-10 * time.Second), time.Minute, PodStatsNear, false},
		{"a signal below its threshold (crossed since the last sync): read", State{}, with(signal.AllocatableMemoryAvailable, 100<<20), nil,
			t0.Add(-10 * time.Second), time.Minute, PodStatsNear, false},
		{"memory stalls: read", State{}, far, stall, t0.Add(-10 * time.Second), time.Minute, PodStatsStall, false},
		{"a signal still under pressure: read", State{pressure: map[signal.Signal]bool{signal.MemoryAvailable: true}}, far, nil,
			t0.Add(-10 * time.Second), time.Minute, PodStatsBusy, false},
		{"an eviction under way: read", State{flights: map[string]flight{"uid-a": {}}}, far, nil,
			t0.Add(-10 * time.Second), time.Minute, PodStatsBusy, false},
		{"a PDB refusal waiting: read", State{refused: map[string]refusal{"uid-a": {}}}, far, nil,
			t0.Add(-10 * time.Second), time.Minute, PodStatsBusy, false},
		{"no thresholds watched yet and fresh stats: reused", State{}, far, nil, t0.Add(-10 * time.Second), time.Minute, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := watch
			if tc.noWatch {
				w = nil
			}
			snap := signal.Snapshot{Observations: tc.obs, PSI: tc.psi}
			if got := tc.st.PodStatsDue(t0, snap, DefaultConfig(), w, tc.last, tc.maxAge); got != tc.want {
				t.Errorf("PodStatsDue = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestPodStatsDueReclaimAware: policy ReclaimAware acts on the non-reclaimable estimate, so the pods
// cgroup's refaults and the estimate's nearness make a sync read the pods, while the working set is far.
func TestPodStatsDueReclaimAware(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 17, 0, 0, 0, time.UTC)
	const mi = 1 << 20
	watch := []Watch{{Signal: signal.AllocatableMemoryAvailable, Value: 456 * mi, Capacity: 2 << 30}}
	far := map[signal.Signal]signal.Observation{signal.AllocatableMemoryAvailable: {Available: 1977 * mi, Capacity: 2 << 30}}
	stat := func(active, inactive, refaults uint64) *signal.MemoryStat {
		return &signal.MemoryStat{ActiveFile: signal.Uint64(active), InactiveFile: signal.Uint64(inactive), Dirty: signal.Uint64(0),
			Writeback: signal.Uint64(0), WorkingsetRefaultFile: signal.Uint64(refaults), PageSize: 4096}
	}
	// windowed is a state whose pods window holds a sample of refaults pages taken a second before t0.
	windowed := func(refaults uint64) State {
		var st State
		st.windows = map[string]rateWindow{scopePods: {cur: sampleOf(stat(0, 1900*mi, refaults), t0.Add(-time.Second))}}
		return st
	}
	reclaimAware := DefaultConfig()
	reclaimAware.Policy = ReclaimAware
	last := t0.Add(-10 * time.Second)
	for _, tc := range []struct {
		name string
		st   State
		cfg  Config
		pods *signal.MemoryStat
		want string
	}{
		{"a thrasher refaulting 200Mi/s with its working set far: read", windowed(0), reclaimAware,
			stat(0, 1900*mi, 200*mi/4096), PodStatsRefaults},
		{"refaults below the rate, inactive cache far from the threshold: reused", windowed(0), reclaimAware,
			stat(0, 1900*mi, 100), ""},
		{"the same refaults under policy pressure: reused (it acts on the working set)", windowed(0), DefaultConfig(),
			stat(0, 1900*mi, 200*mi/4096), ""},
		{"no window yet: no rate, the estimate without refaults is far: reused", State{}, reclaimAware,
			stat(0, 1900*mi, 200*mi/4096), ""},
		{"dirty cache puts the estimate near the threshold: read", windowed(0), reclaimAware,
			func() *signal.MemoryStat { s := stat(0, 1900*mi, 0); s.Dirty = signal.Uint64(1200 * mi); return s }(), PodStatsNearEstimate},
		{"no pods memory.stat: reused", windowed(0), reclaimAware, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := signal.Snapshot{Observations: far, PodsMemory: tc.pods}
			if got := tc.st.PodStatsDue(t0, snap, tc.cfg, watch, last, time.Minute); got != tc.want {
				t.Errorf("PodStatsDue = %q, want %q", got, tc.want)
			}
		})
	}
}
