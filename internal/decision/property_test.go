package decision

import (
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// TestStepInvariants steps random scenarios and checks what must hold whatever the input: at most one
// pressure eviction per step, never a critical pod, local-storage evictions preempt pressure ones,
// conditions sorted, and Admit agreeing with the reported conditions being empty.
func TestStepInvariants(t *testing.T) {
	cfg := config(t, threshold.Input{
		EvictionHard:            map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "pid.available": "100"},
		EvictionSoft:            map[string]string{"memory.available": "1Gi"},
		EvictionSoftGracePeriod: map[string]string{"memory.available": "30s"},
		EvictionMinimumReclaim:  map[string]string{"memory.available": "200Mi"},
	})
	cfg.PressureTransitionPeriod = 30 * time.Second
	r := rand.New(rand.NewSource(42))
	sigs := []signal.Signal{signal.MemoryAvailable, signal.NodeFsAvailable, signal.PIDAvailable}
	for run := 0; run < 300; run++ {
		var st State
		for step := 0; step < 20; step++ {
			now := at(step * 10)
			obs := map[signal.Signal]signal.Observation{}
			for _, s := range sigs {
				if r.Intn(6) > 0 {
					obs[s] = signal.Observation{Available: r.Int63n(2 * gi), Capacity: 4 * gi, Time: now.Add(-time.Duration(r.Intn(2)) * 10 * time.Second)}
				}
			}
			var pods []rank.Candidate
			for i := 0; i < r.Intn(6); i++ {
				p := memPod(string(rune('a'+i)), r.Int63n(3)*100*mi, r.Int63n(3)*200*mi)
				p.Critical = r.Intn(4) == 0
				if r.Intn(5) == 0 {
					p.Stats = nil
				}
				pods = append(pods, p)
			}
			var d Decision
			st, d = Step(st, Input{Now: now, Snapshot: snap(obs), Candidates: pods, Config: cfg, AfterReclaim: &signal.Snapshot{}})
			pressure := 0
			for _, e := range d.Evictions {
				if e.Path == PathPressure {
					pressure++
				}
				for _, p := range pods {
					if p.UID == e.UID && p.Critical {
						t.Fatalf("critical pod %s evicted\n%s", p.Name, d.Trace)
					}
				}
			}
			local := len(d.Evictions) - pressure
			if pressure > 1 || (pressure > 0 && local > 0) {
				t.Fatalf("evictions pressure=%d local=%d\n%s", pressure, local, d.Trace)
			}
			if !sort.SliceIsSorted(d.Conditions, func(i, j int) bool { return d.Conditions[i] < d.Conditions[j] }) {
				t.Fatalf("conditions not sorted: %v", d.Conditions)
			}
			be := memPod("new", 0, 0)
			if ok, _ := Admit(d.Conditions, be); ok != (len(d.Conditions) == 0) {
				t.Fatalf("Admit(best effort) = %v with conditions %v", ok, d.Conditions)
			}
		}
	}
}
