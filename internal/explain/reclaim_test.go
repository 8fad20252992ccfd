package explain

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

// cacheNode is agentNode with policy reclaim-aware and a pods cgroup whose memory is mostly clean,
// active page cache of one reader pod: the kubelet's working set is past its own threshold.
func cacheNode(t *testing.T, psiSome float64) Input {
	reader := bePod("reader", 1900*mi)
	reader.Stats.Memory = &signal.MemoryStat{ActiveFile: u64(1500 * mi), InactiveFile: u64(100 * mi), Dirty: u64(0),
		Writeback: u64(0), PageSize: 4096}
	in := agentNode(t, 250*mi, reader, bePod("quiet", 50*mi))
	in.Snapshot.PodsMemory = &signal.MemoryStat{ActiveFile: u64(1500 * mi), InactiveFile: u64(120 * mi), Dirty: u64(0),
		Writeback: u64(0), PageSize: 4096}
	in.Snapshot.PSI = []signal.Pressure{{Scope: "node", Resource: "memory", Some: signal.PressureLine{Avg10: psiSome}}}
	cfg := policy.DefaultConfig()
	cfg.Policy = policy.ReclaimAware
	in.Agent = &AgentSettings{Config: cfg, Source: "--agent-config agent.yaml"}
	return in
}

func TestReclaimAwareAnswerNextToTheKubeletsForCacheOnly(t *testing.T) {
	r := Build(cacheNode(t, 0.4))
	if len(r.Kubelet.ThresholdsMet) != 0 {
		t.Errorf("kubelet thresholds met %v at 250Mi available, want none (its threshold is 100Mi)", r.Kubelet.ThresholdsMet)
	}
	pressure := cacheNode(t, 0.4)
	pressure.Agent.Config.Policy = policy.Pressure
	if v := Build(pressure).Pressure.Victims; len(v) != 1 || v[0].Pod != "ns/reader" {
		t.Errorf("policy pressure victims %+v, want ns/reader (its cache counts as used)", v)
	}
	ps := r.Pressure
	if ps.Policy != "reclaim-aware" || len(ps.ThresholdsMet) != 0 || len(ps.Victims) != 0 {
		t.Errorf("agent policy %s met %v victims %+v, want reclaim-aware evicting nothing", ps.Policy, ps.ThresholdsMet, ps.Victims)
	}
	want := "policy reclaim-aware: allocatableMemory.available is 250Mi by the kubelet's working set and 1.7Gi once the 1.6Gi " +
		"the kernel can reclaim (clean page cache, not refaulting) is counted; the stall signals do not confirm a shortage: " +
		"pressure-agent does not evict for it"
	if !contains(ps.Differences, want) {
		t.Errorf("differences %q lack %q", ps.Differences, want)
	}
	var text bytes.Buffer
	if err := Text(&text, r); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"MEMORY SIGNAL", "ACTING ON", "node some 0.40% full 0.00%"} {
		if !strings.Contains(text.String(), w) {
			t.Errorf("text lacks %q:\n%s", w, text.String())
		}
	}
}

func TestReclaimAwareNearTheKubeletsThresholdSaysItActsFirst(t *testing.T) {
	in := cacheNode(t, 0.4)
	in.Snapshot.Observations[signal.AllocatableMemoryAvailable] = signal.Observation{Available: 80 * mi, Capacity: 2 * gi, Time: t0}
	r := Build(in)
	if d := cmp.Diff(r.Kubelet.ThresholdsMet, []string{"allocatableMemory.available"}); d != "" {
		t.Fatalf("kubelet thresholds met (-got +want), want the kubelet to evict for the cache:\n%s", d)
	}
	ps := r.Pressure
	if len(ps.Victims) != 1 || ps.Victims[0].Pod != "ns/reader" || len(ps.Reclaim) == 0 || !ps.Reclaim[0].Backstop {
		t.Errorf("victims %+v reclaim %+v, want ns/reader on the backstop", ps.Victims, ps.Reclaim)
	}
	want := "the working set is close to the kubelet's own threshold, which evicts whatever the estimate says: " +
		"pressure-agent acts first, on the working set, ranking by non-reclaimable usage"
	found := false
	for _, d := range ps.Differences {
		found = found || strings.HasSuffix(d, want)
	}
	if !found {
		t.Errorf("differences %q lack one ending %q", ps.Differences, want)
	}
}

func TestReclaimAwareWithoutMemoryStatSaysItActsOnTheWorkingSet(t *testing.T) {
	in := cacheNode(t, 0.4)
	in.Snapshot.PodsMemory = nil
	ps := Build(in).Pressure
	if len(ps.Victims) == 0 || ps.Victims[0].Pod != "ns/reader" {
		t.Errorf("victims %+v, want ns/reader (no estimate: the working set, as policy pressure)", ps.Victims)
	}
	want := "policy reclaim-aware: no reclaim estimate for allocatableMemory.available (no memory.stat of the pods scope): " +
		"pressure-agent acts on the working set, as policy pressure"
	if !contains(ps.Differences, want) {
		t.Errorf("differences %q lack %q", ps.Differences, want)
	}
}

// rungNode is cacheNode with the kubelet's working set at 200Mi: within 128Mi of the kubelet's 100Mi,
// above it, while the estimate leaves 1.7Gi.
func rungNode(t *testing.T, enabled bool) Input {
	in := cacheNode(t, 0.4)
	in.Snapshot.Observations[signal.AllocatableMemoryAvailable] = signal.Observation{Available: 200 * mi, Capacity: 2 * gi, Time: t0}
	in.Agent.Config.Reclaim.Action.Enabled = enabled
	in.Agent.Config.Reclaim.KubeletHorizon = 0 // one snapshot has no trend: the fixed margin
	return in
}

func TestTheReclaimRungSaysWhatItWouldReclaimInsteadOfEvicting(t *testing.T) {
	for _, tc := range []struct {
		name    string
		enabled bool
		victims int
		want    string
	}{
		{"rung on: reclaim, no eviction", true, 0, "would reclaim 356Mi of file pages from ns/reader instead of evicting (allocatableMemory.available)"},
		{"rung off: the eviction, and what would have avoided it", false, 1,
			"reclaiming 356Mi of file pages from ns/reader would have avoided this eviction (allocatableMemory.available)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Build(rungNode(t, tc.enabled))
			ps := r.Pressure
			if len(ps.Victims) != tc.victims || len(ps.ReclaimActions) != 1 || ps.ReclaimActions[0].Planned != tc.enabled {
				t.Fatalf("victims %+v reclaim actions %+v, want %d victims and one reclaim (planned %t)", ps.Victims,
					ps.ReclaimActions, tc.victims, tc.enabled)
			}
			if a := ps.ReclaimActions[0]; a.Target != "ns/reader" || a.Bytes != "373293056" || !strings.HasPrefix(a.Says, tc.want) {
				t.Errorf("reclaim action %+v, want ns/reader, 356Mi, saying %q", a, tc.want)
			}
			var text, js bytes.Buffer
			if err := Text(&text, r); err != nil {
				t.Fatal(err)
			}
			if err := JSON(&js, r); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(strings.Fields(text.String()), " "), tc.want) {
				t.Errorf("text lacks %q:\n%s", tc.want, text.String())
			}
			if !strings.Contains(js.String(), `"reclaimActions"`) {
				t.Errorf("JSON lacks reclaimActions:\n%s", js.String())
			}
		})
	}
}
