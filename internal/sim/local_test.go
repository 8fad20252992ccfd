package sim

import (
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

// staleRecording is the soak's episode 0: hog-0 (request 64Mi) ramps from 10Mi at 50Mi/s to 800Mi,
// but the Summary measured it once, at 10Mi, before the ramp; hog-1 (request 64Mi) holds 100Mi and the
// Summary measures it every 10 s. The pods cgroup (1024Mi) samples every 10 s are true. With local,
// the agent's own reads every 100ms are in the recording too.
func staleRecording(local bool) Recording {
	span := 30 * time.Second
	r := Recording{Node: "rec", Start: t0, End: t0.Add(span)}
	hog0 := RecordedPod{Info: PodInfo{Candidate: pod("hog-0", 64*mi, 0, Ramp{}).Candidate, Since: t0.Add(-time.Minute)}}
	hog1 := RecordedPod{Info: PodInfo{Candidate: pod("hog-1", 64*mi, 0, Ramp{}).Candidate, Since: t0.Add(-time.Minute)}}
	hog0At := func(d time.Duration) int64 { return min(800*mi, 10*mi+int64(50*mi*d.Seconds())) }
	hog0.Samples = []PodSample{{Stats: stats("hog-0", 10*mi, t0), Seen: t0}}
	for d := time.Duration(0); d <= span; d += 10 * time.Second {
		at := t0.Add(d)
		hog1.Samples = append(hog1.Samples, PodSample{Stats: stats("hog-1", 100*mi, at), Seen: at})
		r.PodsMemory = append(r.PodsMemory, MemorySample{At: at, Available: 1024*mi - 100*mi - hog0At(d), Capacity: 1024 * mi})
		r.NodeMemory = append(r.NodeMemory, MemorySample{At: at, Available: 6 << 30, Capacity: 8 << 30})
	}
	r.Pods = []RecordedPod{hog0, hog1}
	for d := time.Duration(0); local && d <= span; d += 100 * time.Millisecond {
		ws := 100*mi + hog0At(d)
		r.Local = append(r.Local, LocalSample{At: t0.Add(d),
			Memory: Memory{NodeCapacity: 8 << 30, NodeWorkingSet: 2 << 30, PodsCapacity: 1024 * mi, PodsWorkingSet: ws, PodsKnown: true},
			Pods:   map[string]signal.PodStats{"uid-hog-0": stats("hog-0", hog0At(d), t0), "uid-hog-1": stats("hog-1", 100*mi, t0)}})
	}
	return r
}

func TestTheAgentRunReadsTheLocalSamplesWhenTheRecordingHasThem(t *testing.T) {
	for _, tc := range []struct {
		name  string
		local bool
		first string
	}{
		{"without local samples the agent ranks by the Summary's stale 10Mi of hog-0 and evicts hog-1", false, "default/hog-1"},
		{"with local samples the agent sees hog-0's ramp and evicts it first, as the real agent did", true, "default/hog-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Kubelet: noNotifier(hard200(t)), Timing: DefaultTiming(),
				NewAgent:      PolicyAgent(policy.DefaultConfig(), policy.LadderConfig{}, hard200(t), decision.Semantics{}, nil),
				AgentTiming:   AgentTiming{SyncPeriod: 10 * time.Second, PollInterval: 100 * time.Millisecond, PollDelta: 32 * mi},
				AgentTaintKey: "pressure.kube-pressure.io/evicting"}
			res := Simulate(staleRecording(tc.local).World(), o)
			got := evictions(res, RunAgent)
			if len(got) == 0 || got[0].pod != tc.first || got[0].by != ActorAgent {
				t.Errorf("agent run evictions %v, want %s first, by pressure-agent", got, tc.first)
			}
			if k := evictions(res, RunKubelet); len(k) == 0 || k[0].pod != "default/hog-1" {
				t.Errorf("kubelet run evictions %v, want hog-1 first: the kubelet ranks by the Summary's cache either way", k)
			}
		})
	}
}

func TestLocalUsageIsTheLastReadAtOrBeforeT(t *testing.T) {
	w := staleRecording(true).World().(agentViewer).AgentView()
	for _, tc := range []struct {
		name string
		at   time.Duration
		want int64
	}{
		{"a read's own time gives that read", 2 * time.Second, 110 * mi},
		{"between two reads the earlier holds, no interpolation", 2050 * time.Millisecond, 110 * mi},
		{"past the last read the pod keeps it", 40 * time.Second, 800 * mi},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, ok := w.Usage("uid-hog-0", t0.Add(tc.at))
			if !ok || workingSet(s) != tc.want {
				t.Errorf("Usage(hog-0, +%s) = %s (ok %t), want %s", tc.at, formatMi(workingSet(s)), ok, formatMi(tc.want))
			}
		})
	}
	if m := w.Memory(t0.Add(5 * time.Second)); m.PodsWorkingSet != 360*mi {
		t.Errorf("Memory(+5s).PodsWorkingSet = %s, want the local read's 360Mi", formatMi(m.PodsWorkingSet))
	}
	if v := staleRecording(false).World().(agentViewer).AgentView(); v != nil {
		t.Errorf("AgentView of a recording without local samples = %T, want nil (the Summary's world)", v)
	}
	if iv := staleRecording(true).LocalInterval(); iv != 100*time.Millisecond {
		t.Errorf("LocalInterval = %s, want 100ms", iv)
	}
}
