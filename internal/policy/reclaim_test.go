package policy

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/rank/ranktest"
	"github.com/kube-pressure/pressure/internal/signal"
)

const mi = 1 << 20

func stat(active, inactive, dirty, writeback uint64) *signal.MemoryStat {
	return &signal.MemoryStat{ActiveFile: signal.Uint64(active * mi), InactiveFile: signal.Uint64(inactive * mi),
		Dirty: signal.Uint64(dirty * mi), Writeback: signal.Uint64(writeback * mi), PageSize: 4096}
}

func TestEstimateReclaim(t *testing.T) {
	shmem := stat(100, 50, 0, 0)
	shmem.Shmem = signal.Uint64(500 * mi)
	noDirty := stat(100, 50, 0, 0)
	noDirty.Dirty = nil
	noFile := stat(100, 50, 0, 0)
	noFile.ActiveFile = nil
	for _, tc := range []struct {
		name   string
		m      *signal.MemoryStat
		rate   float64
		want   Reclaim
		wantOK bool
	}{
		{"clean cache that does not refault is all reclaimable, active and inactive", stat(100, 50, 0, 0), 0,
			Reclaim{File: 150 * mi, Inactive: 50 * mi, Reclaimable: 150 * mi}, true},
		{"dirty and writeback pages are not reclaimable before they are written", stat(100, 50, 30, 20), 0,
			Reclaim{File: 150 * mi, Inactive: 50 * mi, Dirty: 30 * mi, Writeback: 20 * mi, Reclaimable: 100 * mi}, true},
		{"cache refaulted within the window is not reclaimable", stat(100, 50, 0, 0), 5 * mi,
			Reclaim{File: 150 * mi, Inactive: 50 * mi, Refaulted: 50 * mi, Reclaimable: 100 * mi}, true},
		{"refaults are counted at most up to the file pages", stat(100, 50, 0, 0), 100 * mi,
			Reclaim{File: 150 * mi, Inactive: 50 * mi, Refaulted: 150 * mi}, true},
		{"more dirty than file floors the estimate at zero", stat(10, 0, 30, 0), 0,
			Reclaim{File: 10 * mi, Dirty: 30 * mi}, true},
		{"shmem is not taken off: it is on the anonymous lists, never in the file pages", shmem, 0,
			Reclaim{File: 150 * mi, Inactive: 50 * mi, Reclaimable: 150 * mi}, true},
		{"absent dirty is unknown, not zero", noDirty, 0, Reclaim{}, false},
		{"absent file pages are unknown, not zero", noFile, 0, Reclaim{}, false},
		{"no memory.stat is unknown", nil, 0, Reclaim{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := EstimateReclaim(tc.m, tc.rate, 10*time.Second)
			if ok != tc.wantOK {
				t.Fatalf("EstimateReclaim ok = %t, want %t", ok, tc.wantOK)
			}
			if d := cmp.Diff(got, tc.want); d != "" {
				t.Errorf("EstimateReclaim (-got +want):\n%s", d)
			}
		})
	}
}

func TestNonReclaimableIsUsageMinusReclaimable(t *testing.T) {
	r := Reclaim{File: 150 * mi, Inactive: 50 * mi, Dirty: 30 * mi, Reclaimable: 120 * mi}
	// usage = working set 400Mi + inactive 50Mi; 120Mi of it is reclaimable.
	if got := r.NonReclaimable(400 * mi); got != 330*mi {
		t.Errorf("NonReclaimable(400Mi) = %d, want 330Mi", got)
	}
	if got := r.Gain(); got != 70*mi {
		t.Errorf("Gain() = %d, want 70Mi (reclaimable beyond inactive_file)", got)
	}
}

func TestRateWindow(t *testing.T) {
	at := func(d time.Duration, refault uint64) counters {
		return counters{at: t0.Add(d), refault: refault, refKnown: true, pageSize: 4096}
	}
	const window, span = 10 * time.Second, time.Second
	for _, tc := range []struct {
		name    string
		samples []counters
		want    rates
	}{
		{"the first sample has no rate", []counters{at(0, 0)}, rates{}},
		{"a rate needs the minimum span", []counters{at(0, 0), at(500*time.Millisecond, 256)}, rates{}},
		{"a rate over the span since the first sample", []counters{at(0, 0), at(2*time.Second, 512)},
			rates{refault: 1 << 20, refaultKnown: true}},
		{"after half a window the rate runs from the older sample", []counters{at(0, 0), at(6*time.Second, 1536),
			at(7*time.Second, 1536+2560)}, rates{refault: float64(4096*4096) / 7, refaultKnown: true}},
		{"a counter that went down (cgroup recreated) has no rate", []counters{at(0, 1000), at(2*time.Second, 10)}, rates{}},
		{"after a counter went down the rate runs from the restart", []counters{at(0, 1000), at(2*time.Second, 10),
			at(3*time.Second, 20)}, rates{refault: 10 * 4096, refaultKnown: true}},
		{"an absent counter has no rate", []counters{{at: t0, pageSize: 4096}, {at: t0.Add(2 * time.Second), pageSize: 4096}}, rates{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w rateWindow
			var got rates
			for _, s := range tc.samples {
				w, got = w.observe(s, window, span)
			}
			if d := cmp.Diff(got, tc.want, cmp.AllowUnexported(rates{})); d != "" {
				t.Errorf("rates (-got +want):\n%s", d)
			}
		})
	}
}

// reclaimInput is the last step of testdata/reclaim-hog.txt: a hog of anonymous memory and a pod with
// the larger working set, most of it dirty cache; the estimate (348Mi) crosses 356Mi.
func reclaimInput(t *testing.T, name Name, psi float64) Input {
	cfg := DefaultConfig()
	cfg.Policy = name
	pod := func(name string, ws uint64, m *signal.MemoryStat) Pod {
		c, err := ranktest.Pod([]string{name, "request=100Mi", fmt.Sprintf("usage=%dMi", ws)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.Stats.Memory = m
		return Pod{Candidate: c}
	}
	snap := signal.Snapshot{
		Observations: map[signal.Signal]signal.Observation{
			signal.AllocatableMemoryAvailable: {Available: 238 * mi, Capacity: 2048 * mi, Time: t0},
		},
		PodsMemory: stat(900, 30, 790, 0),
		PSI:        []signal.Pressure{{Scope: "node", Resource: "memory", Some: signal.PressureLine{Avg10: psi}}},
	}
	return Input{Now: t0, Config: cfg, Kubelet: kubelet(t, map[string]string{"memory.available": "100Mi"}), Snapshot: snap,
		Pods: []Pod{pod("hog", 870, stat(10, 10, 0, 0)), pod("cachey", 940, stat(890, 20, 790, 0))}}
}

func evicted(p Plan) []string {
	var out []string
	for _, e := range p.Evictions {
		out = append(out, e.Name)
	}
	return out
}

func TestReclaimAwareRanksByNonReclaimableUsage(t *testing.T) {
	_, pressure := Step(State{}, reclaimInput(t, Pressure, 0))
	_, aware := Step(State{}, reclaimInput(t, ReclaimAware, 0))
	if d := cmp.Diff(evicted(pressure), []string{"cachey"}); d != "" {
		t.Errorf("policy pressure evicts (-got +want), by working set above request:\n%s", d)
	}
	if d := cmp.Diff(evicted(aware), []string{"hog"}); d != "" {
		t.Errorf("policy reclaim-aware evicts (-got +want), by non-reclaimable usage above request:\n%s", d)
	}
}

func TestReclaimAwareWithoutAnEstimateActsOnTheWorkingSet(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*Input)
	}{
		{"no memory.stat of the pods cgroup", func(in *Input) { in.Snapshot.PodsMemory = nil }},
		{"the refault rate is not measured and PSI is unknown", func(in *Input) { in.Snapshot.PSI = nil }},
		{"the refault rate is not measured and PSI is high", func(in *Input) { in.Snapshot.PSI[0].Some.Avg10 = 50 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := reclaimInput(t, ReclaimAware, 0)
			in.Snapshot.PodsMemory = stat(900, 30, 0, 0) // all clean: the estimate would not cross
			tc.edit(&in)
			_, p := Step(State{}, in)
			if len(p.Reclaim) != 1 || p.Reclaim[0].Known {
				t.Fatalf("Reclaim = %+v, want one unknown view", p.Reclaim)
			}
			if len(p.Evictions) == 0 || p.Reclaim[0].Effective != 238*mi {
				t.Errorf("evictions %v acting on %d, want an eviction on the working set (238Mi available)",
					evicted(p), p.Reclaim[0].Effective)
			}
		})
	}
}

func TestReclaimAwareNearTheKubeletsThresholdActsOnTheWorkingSet(t *testing.T) {
	in := reclaimInput(t, ReclaimAware, 0)
	in.Snapshot.PodsMemory = stat(900, 30, 0, 0) // all clean: the estimate alone would not cross
	in.Config.Reclaim.KubeletHorizon = 0         // the fixed margin alone (the trend: reclaim-steady.txt)
	obs := in.Snapshot.Observations[signal.AllocatableMemoryAvailable]
	for _, tc := range []struct {
		name     string
		avail    int64
		backstop bool
	}{
		{"128Mi above the kubelet's 100Mi is outside the margin", 228 * mi, false},
		{"just inside the margin the kubelet is about to evict: the agent acts first", 227 * mi, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs.Available = tc.avail
			in.Snapshot.Observations = map[signal.Signal]signal.Observation{signal.AllocatableMemoryAvailable: obs}
			_, p := Step(State{}, in)
			if v := p.Reclaim[0]; v.Backstop != tc.backstop || (len(p.Evictions) > 0) != tc.backstop {
				t.Errorf("backstop %t, evictions %v; want backstop %t and an eviction only then", v.Backstop, evicted(p), tc.backstop)
			}
		})
	}
}

func TestReclaimConfigValidation(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Policy = ReclaimAware
	if err := cfg.Validate(); err != nil {
		t.Errorf("the default reclaim-aware config: %v", err)
	}
	cfg.Reclaim.PSISomeAvg10, cfg.Reclaim.RefaultRate, cfg.Reclaim.MinRateSpan = 0, -1, 0
	err := cfg.Validate()
	for _, want := range []string{"reclaim.psiSomeAvg10 0: must be above 0", "reclaim.refaultRate/kubeletMargin -1/134217728", "minRateSpan must be positive"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to say %q", err, want)
		}
	}
	cfg.Policy = "reclaim"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), `policy "reclaim": must be "pressure", "kubelet" or "reclaim-aware"`) {
		t.Errorf("Validate() of an unknown policy = %v", err)
	}
}
