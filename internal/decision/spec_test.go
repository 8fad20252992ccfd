package decision

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Tests named after the fidelity cases of the spec (§10). Each steps a fake clock through the scenario.

func TestThresholdMetIsStrict(t *testing.T) {
	tests := []struct {
		name      string
		cfg       threshold.Config
		snap      signal.Snapshot
		wantMet   bool
		wantConds []signal.NodeCondition
	}{
		{"T1 available equal to the threshold is not met", hard(t, "memory.available", "100Mi"),
			memObs(104857600, 16*gi, at(0)), false, nil},
		{"T1 available one byte below the threshold is met", hard(t, "memory.available", "100Mi"),
			memObs(104857599, 16*gi, at(0)), true, []signal.NodeCondition{signal.MemoryPressure}},
		{"T2 float32 percentage: exactly 10Gi of 100Gi is met", hard(t, "nodefs.available", "10%"),
			snap(map[signal.Signal]signal.Observation{signal.NodeFsAvailable: {Available: 10737418240, Capacity: 100 * gi, Time: at(0)}}),
			true, []signal.NodeCondition{signal.DiskPressure}},
		{"T2 float32 percentage: 10737418400 of 100Gi is not met", hard(t, "nodefs.available", "10%"),
			snap(map[signal.Signal]signal.Observation{signal.NodeFsAvailable: {Available: 10737418400, Capacity: 100 * gi, Time: at(0)}}),
			false, nil},
		{"T4 imagefs threshold without an imagefs observation is never met", hard(t, "imagefs.available", "15%"),
			snap(map[signal.Signal]signal.Observation{signal.NodeFsAvailable: {Available: 1, Capacity: 100 * gi, Time: at(0)}}),
			false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.PressureTransitionPeriod = 5 * time.Minute
			_, d := Step(State{}, Input{Now: at(0), Snapshot: tc.snap, Config: cfg})
			if got := len(d.Met) > 0; got != tc.wantMet {
				t.Errorf("met = %v, want %v\n%s", got, tc.wantMet, d.Trace)
			}
			if diff := cmp.Diff(d.Conditions, tc.wantConds); diff != "" {
				t.Errorf("conditions (-got +want):\n%s", diff)
			}
		})
	}
}

func TestT3MinReclaimKeepsPressureUntilThresholdPlusMinReclaim(t *testing.T) {
	cfg := config(t, threshold.Input{EvictionHard: map[string]string{"memory.available": "100Mi"},
		EvictionMinimumReclaim: map[string]string{"memory.available": "500Mi"}})
	st := State{}
	steps := []struct {
		available int64
		wantEvict []string
		wantCond  bool
	}{
		{90 * mi, []string{"a"}, true},
		{300 * mi, []string{"a"}, true}, // plain check not met, threshold+minReclaim (600Mi) still met
		{600 * mi, nil, true},           // resolved; condition lingers for the transition period
	}
	for i, s := range steps {
		var d Decision
		st, d = Step(st, Input{Now: at(10 * i), Snapshot: memObs(s.available, 16*gi, at(10*i)),
			Candidates: r1Pods(), Config: cfg})
		if diff := cmp.Diff(evictedNames(d), s.wantEvict); diff != "" {
			t.Errorf("sync %d evicted (-got +want):\n%s\n%s", i+1, diff, d.Trace)
		}
		if i == 2 && len(d.Met) != 0 {
			t.Errorf("sync 3 met = %v, want none", d.Met)
		}
		if got := len(d.Conditions) == 1; got != s.wantCond {
			t.Errorf("sync %d conditions = %v", i+1, d.Conditions)
		}
	}
}

func diskPod(name string, rootfs int64) rank.Candidate {
	return rank.Candidate{UID: "uid-" + name, Namespace: "default", Name: name, QOSClass: rank.QOSBestEffort,
		Containers: []rank.Container{{Name: name, Kind: rank.ContainerRegular}},
		Stats:      &signal.PodStats{Containers: []signal.ContainerStats{{Name: name, RootfsUsed: u64(rootfs), LogsUsed: u64(0)}}}}
}

func TestT5NodeReclaimBeforeEviction(t *testing.T) {
	cfg := hard(t, "nodefs.available", "10%")
	low := snap(map[signal.Signal]signal.Observation{signal.NodeFsAvailable: {Available: 5 * gi, Capacity: 100 * gi, Time: at(0)}})
	fine := snap(map[signal.Signal]signal.Observation{signal.NodeFsAvailable: {Available: 20 * gi, Capacity: 100 * gi, Time: at(1)}})
	pods := []rank.Candidate{diskPod("d", gi)}

	t.Run("single filesystem asks for containers GC then image GC and evicts nothing yet", func(t *testing.T) {
		_, d := Step(State{}, Input{Now: at(0), Snapshot: low, Candidates: pods, Config: cfg})
		want := &NodeReclaim{Signal: signal.NodeFsAvailable, Actions: []ReclaimAction{ContainerGC, ImageGC}, Pending: true}
		if diff := cmp.Diff(d.NodeReclaim, want); diff != "" {
			t.Errorf("node reclaim (-got +want):\n%s", diff)
		}
		if len(d.Evictions) != 0 {
			t.Errorf("evictions = %v, want none while reclaim is pending", evictedNames(d))
		}
	})
	t.Run("successful reclaim evicts nothing but keeps the event and DiskPressure", func(t *testing.T) {
		_, d := Step(State{}, Input{Now: at(0), Snapshot: low, Candidates: pods, Config: cfg, AfterReclaim: &fine})
		if d.NodeReclaim == nil || !d.NodeReclaim.Succeeded {
			t.Fatalf("node reclaim = %+v, want succeeded\n%s", d.NodeReclaim, d.Trace)
		}
		if len(d.Evictions) != 0 {
			t.Errorf("evictions = %v, want none", evictedNames(d))
		}
		wantEvent := &NodeEvent{Type: "Warning", Reason: "EvictionThresholdMet", Message: "Attempting to reclaim ephemeral-storage"}
		if diff := cmp.Diff(d.NodeEvent, wantEvent); diff != "" {
			t.Errorf("event (-got +want):\n%s", diff)
		}
		if diff := cmp.Diff(d.Conditions, []signal.NodeCondition{signal.DiskPressure}); diff != "" {
			t.Errorf("conditions (-got +want):\n%s", diff)
		}
	})
	t.Run("failed reclaim evicts a pod", func(t *testing.T) {
		_, d := Step(State{}, Input{Now: at(0), Snapshot: low, Candidates: pods, Config: cfg, AfterReclaim: &low})
		if diff := cmp.Diff(evictedNames(d), []string{"d"}); diff != "" {
			t.Errorf("evicted (-got +want):\n%s", diff)
		}
	})
	t.Run("dedicated imagefs and nodefs pressure has no reclaim and evicts immediately", func(t *testing.T) {
		s := low
		s.Filesystems = signal.FilesystemLayout{DedicatedImageFs: true}
		logPod := diskPod("d", gi)
		logPod.Stats.Containers[0].LogsUsed = u64(mi)
		_, d := Step(State{}, Input{Now: at(0), Snapshot: s, Candidates: []rank.Candidate{logPod}, Config: cfg})
		if d.NodeReclaim != nil {
			t.Errorf("node reclaim = %+v, want none", d.NodeReclaim)
		}
		if diff := cmp.Diff(evictedNames(d), []string{"d"}); diff != "" {
			t.Errorf("evicted (-got +want):\n%s", diff)
		}
	})
}

// run steps every 10 s from 0 to end (inclusive) with the memory available given by avail(t) and returns
// the seconds at which a pod was evicted and the seconds at which MemoryPressure was reported.
func run(t *testing.T, cfg threshold.Config, end int, avail func(sec int) int64) (evicted, pressure []int, st State) {
	t.Helper()
	for sec := 0; sec <= end; sec += 10 {
		var d Decision
		st, d = Step(st, Input{Now: at(sec), Snapshot: memObs(avail(sec), 16*gi, at(sec)),
			Candidates: r1Pods(), Config: cfg})
		if len(d.Evictions) > 0 {
			evicted = append(evicted, sec)
		}
		if len(d.Conditions) > 0 {
			pressure = append(pressure, sec)
		}
	}
	return evicted, pressure, st
}

func softMemory(t *testing.T) threshold.Config {
	return config(t, threshold.Input{EvictionHard: map[string]string{}, EvictionHardSet: true,
		EvictionSoft:            map[string]string{"memory.available": "1Gi"},
		EvictionSoftGracePeriod: map[string]string{"memory.available": "90s"}})
}

func TestGracePeriods(t *testing.T) {
	t.Run("G1 soft threshold reports pressure at once and evicts when the grace period has passed", func(t *testing.T) {
		evicted, pressure, _ := run(t, softMemory(t), 90, func(int) int64 { return 500 * mi })
		if diff := cmp.Diff(evicted, []int{90}); diff != "" {
			t.Errorf("evicted at (-got +want):\n%s", diff)
		}
		if len(pressure) != 10 || pressure[0] != 0 {
			t.Errorf("pressure reported at %v, want every sync from 0", pressure)
		}
	})
	t.Run("G2 one sync above the threshold resets the grace timer", func(t *testing.T) {
		evicted, _, _ := run(t, softMemory(t), 160, func(sec int) int64 {
			if sec == 50 {
				return 2 * gi
			}
			return 500 * mi
		})
		if diff := cmp.Diff(evicted, []int{150, 160}); diff != "" {
			t.Errorf("evicted at (-got +want):\n%s", diff)
		}
	})
	t.Run("G5 hard threshold evicts in the sync it is first observed", func(t *testing.T) {
		evicted, _, _ := run(t, hard(t, "memory.available", "100Mi"), 0, func(int) int64 { return 50 * mi })
		if diff := cmp.Diff(evicted, []int{0}); diff != "" {
			t.Errorf("evicted at (-got +want):\n%s", diff)
		}
	})
}

func TestTransitionPeriod(t *testing.T) {
	bestEffort := memPod("new", 0, 0)
	t.Run("G3 condition lingers strictly less than the transition period and admission keeps rejecting", func(t *testing.T) {
		cfg := hard(t, "memory.available", "100Mi")
		cfg.PressureTransitionPeriod = 5 * time.Minute
		_, pressure, _ := run(t, cfg, 400, func(sec int) int64 {
			if sec <= 100 {
				return 50 * mi
			}
			return 4 * gi
		})
		if got, want := pressure[len(pressure)-1], 390; got != want {
			t.Errorf("last sync with pressure = %d, want %d", got, want)
		}
		st := State{}
		for _, sec := range []int{100, 390} {
			avail := int64(4 * gi)
			if sec == 100 {
				avail = 50 * mi
			}
			st, _ = Step(st, Input{Now: at(sec), Snapshot: memObs(avail, 16*gi, at(sec)), Config: cfg})
		}
		if ok, msg := Admit(st.Conditions, bestEffort); ok || msg != "The node had condition: [MemoryPressure]. " {
			t.Errorf("Admit in the tail = %v %q, want rejected", ok, msg)
		}
	})
	t.Run("G4 a zero transition period never reports a condition, even while evicting", func(t *testing.T) {
		cfg := hard(t, "memory.available", "100Mi")
		cfg.PressureTransitionPeriod = 0
		evicted, pressure, st := run(t, cfg, 20, func(int) int64 { return 50 * mi })
		if len(evicted) != 3 || len(pressure) != 0 {
			t.Errorf("evicted at %v, pressure at %v; want 3 evictions and no pressure", evicted, pressure)
		}
		if ok, _ := Admit(st.Conditions, bestEffort); !ok {
			t.Errorf("Admit = false, want admitted")
		}
	})
}

func TestG6StaleStatsBlockEvictionButNotConditions(t *testing.T) {
	cfg := hard(t, "memory.available", "100Mi")
	cfg.PressureTransitionPeriod = 5 * time.Minute
	st, d := Step(State{}, Input{Now: at(0), Snapshot: memObs(50*mi, 16*gi, at(0)), Candidates: r1Pods(), Config: cfg})
	if len(d.Evictions) != 1 {
		t.Fatalf("first sync evicted %v, want one", evictedNames(d))
	}
	st, d = Step(st, Input{Now: at(10), Snapshot: memObs(50*mi, 16*gi, at(0)), Candidates: r1Pods(), Config: cfg})
	if len(d.Evictions) != 0 {
		t.Errorf("stale sync evicted %v, want none", evictedNames(d))
	}
	if diff := cmp.Diff(d.Conditions, []signal.NodeCondition{signal.MemoryPressure}); diff != "" {
		t.Errorf("conditions (-got +want):\n%s", diff)
	}
	if diff := cmp.Diff(st.ThresholdsMet, []ThresholdID{0}); diff != "" {
		t.Errorf("thresholds met (-got +want):\n%s", diff)
	}
	if !strings.Contains(d.Trace.String(), "stale #0") {
		t.Errorf("trace lacks the stale entry:\n%s", d.Trace)
	}
}

func TestR8CriticalPodsAreSkipped(t *testing.T) {
	cfg := hard(t, "memory.available", "100Mi")
	static := memPod("static", 0, 4*gi)
	static.Critical, static.CriticalReason = true, "static pod"
	x := memPod("x", 0, 10*mi)
	_, d := Step(State{}, Input{Now: at(0), Snapshot: memObs(50*mi, 16*gi, at(0)), Candidates: []rank.Candidate{x, static}, Config: cfg})
	if diff := cmp.Diff(evictedNames(d), []string{"x"}); diff != "" {
		t.Errorf("evicted (-got +want):\n%s", diff)
	}
	if !strings.Contains(d.Trace.String(), "skip default/static: cannot evict a critical pod (static pod)") {
		t.Errorf("trace lacks the skip:\n%s", d.Trace)
	}
	_, d = Step(State{}, Input{Now: at(0), Snapshot: memObs(50*mi, 16*gi, at(0)), Candidates: []rank.Candidate{static}, Config: cfg})
	if len(d.Evictions) != 0 || !strings.Contains(d.Trace.String(), "unable to evict any pods from the node") {
		t.Errorf("only critical pods: evicted %v\n%s", evictedNames(d), d.Trace)
	}
}

func TestR9MemoryIsReclaimedBeforeDisk(t *testing.T) {
	cfg := hard(t, "memory.available", "100Mi", "nodefs.available", "10%")
	s := snap(map[signal.Signal]signal.Observation{
		signal.MemoryAvailable: {Available: 50 * mi, Capacity: 16 * gi, Time: at(0)},
		signal.NodeFsAvailable: {Available: gi, Capacity: 100 * gi, Time: at(0)},
	})
	_, d := Step(State{}, Input{Now: at(0), Snapshot: s, Candidates: r1Pods(), Config: cfg})
	if d.Resource != signal.ResourceMemory || d.NodeEvent == nil || d.NodeEvent.Message != "Attempting to reclaim memory" {
		t.Errorf("resource %q event %+v, want memory", d.Resource, d.NodeEvent)
	}
	if d.Ranking == nil || d.Ranking.Signal != signal.MemoryAvailable {
		t.Errorf("ranking = %+v, want memory ranking", d.Ranking)
	}
	if d.NodeReclaim != nil {
		t.Errorf("node reclaim = %+v, want none for memory", d.NodeReclaim)
	}
	if diff := cmp.Diff(evictedNames(d), []string{"a"}); diff != "" {
		t.Errorf("evicted (-got +want):\n%s", diff)
	}
}
