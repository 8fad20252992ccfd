package sim

import (
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

// podsUsed and nodeUsed set a local sample's pods cgroup or node working set.
func podsUsed(x LocalSample, used int64) LocalSample {
	x.Memory.PodsCapacity, x.Memory.PodsWorkingSet, x.Memory.PodsKnown = 2048*mi, used, true
	return x
}

func nodeUsed(x LocalSample, used int64) LocalSample {
	x.Memory.NodeCapacity, x.Memory.NodeWorkingSet = 8192*mi, used
	return x
}

func TestLocalReleaseIsWhereTheReadsLoseThePod(t *testing.T) {
	read := func(at time.Duration, ws ...int64) LocalSample {
		x := LocalSample{At: t0.Add(at), Pods: map[string]signal.PodStats{}}
		if len(ws) > 0 {
			x.Pods["uid-a"] = stats("a", ws[0], t0.Add(at))
		}
		return x
	}
	reads := func(s []LocalSample) []PodSample {
		var out []PodSample
		for _, x := range s {
			if ps, ok := x.Pods["uid-a"]; ok {
				out = append(out, PodSample{Stats: ps, Seen: x.At})
			}
		}
		return out
	}
	sec := time.Second
	for _, tc := range []struct {
		name   string
		s      []LocalSample
		ended  time.Duration
		at     time.Duration
		before int
		ok     bool
	}{
		{"a read that drops to a near-zero working set is the release",
			[]LocalSample{read(0, 400*mi), read(sec, 450*mi), read(2*sec, mi), read(3*sec, 0)}, sec, 2 * sec, 2, true},
		{"the first read without the pod is the release",
			[]LocalSample{read(0, 400*mi), read(sec, 450*mi), read(2 * sec)}, sec, 2 * sec, 2, true},
		{"a drop more than a second before the eviction is the pod's own, not the release",
			[]LocalSample{read(0, 400*mi), read(sec, 100*mi), read(2*sec, 120*mi), read(3*sec, 120*mi), read(4*sec, 0)}, 3 * sec, 4 * sec, 4, true},
		{"a release read just before the ledger's time (written after the API answered) counts",
			[]LocalSample{read(0, 400*mi), read(sec, 450*mi), read(1900*time.Millisecond, mi), read(3*sec, mi)}, 2 * sec, 1900 * time.Millisecond, 2, true},
		{"a pod still read at the end was not released within the recording",
			[]LocalSample{read(0, 400*mi), read(sec, 450*mi), read(2*sec, 460*mi)}, sec, 0, 0, false},
		{"a fall by less than half is not a release",
			[]LocalSample{read(0, 400*mi), read(sec, 300*mi), read(2*sec, 250*mi)}, 0, 0, 0, false},
		{"a pod never read has no release", []LocalSample{read(0), read(sec)}, 0, 0, 0, false},
		{"a starting pod's dip that its growth then passes is not the release",
			[]LocalSample{read(0, 4*mi), read(sec, mi), read(2*sec, 300*mi), read(3*sec, 600*mi), read(4 * sec)}, 2 * sec, 4 * sec, 4, true},
		{"a read that loses the pod once, which then comes back, is not the release",
			[]LocalSample{read(0, 400*mi), read(sec), read(2*sec, 450*mi), read(3*sec, mi)}, 2 * sec, 3 * sec, 2, true},
		{"a read whose signals already lost the pod's memory is torn: the release is there",
			[]LocalSample{podsUsed(read(0, 400*mi), 900*mi), podsUsed(read(sec, 400*mi), 500*mi), podsUsed(read(2*sec, mi), 500*mi)},
			sec, sec, 1, true},
		{"a read whose signals fell by less than half the pod is not torn",
			[]LocalSample{podsUsed(read(0, 400*mi), 900*mi), podsUsed(read(sec, 400*mi), 850*mi), podsUsed(read(2*sec, mi), 450*mi)},
			sec, 2 * sec, 2, true},
		{"a read whose signals fell again at the release is not torn (the fall before it was another pod's)",
			[]LocalSample{podsUsed(read(0, 400*mi), 1300*mi), podsUsed(read(sec, 400*mi), 900*mi), podsUsed(read(2*sec, mi), 500*mi)},
			sec, 2 * sec, 2, true},
		{"without the pods cgroup the node's signal says it",
			[]LocalSample{nodeUsed(read(0, 400*mi), 900*mi), nodeUsed(read(sec, 400*mi), 500*mi), nodeUsed(read(2*sec, mi), 500*mi)},
			sec, sec, 1, true},
		{"a read without any signal is never torn",
			[]LocalSample{read(0, 400*mi), read(sec, 400*mi), read(2*sec, mi)}, sec, 2 * sec, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, n, ok := localRelease(tc.s, reads(tc.s), "uid-a", t0.Add(tc.ended))
			if ok != tc.ok || ok && (!at.Equal(t0.Add(tc.at)) || n != tc.before) {
				t.Errorf("localRelease = %s, %d reads before, %t; want +%s, %d, %t", at.Sub(t0), n, ok, tc.at, tc.before, tc.ok)
			}
		})
	}
}

// agentEvictedRecording: hog (request 64Mi) ramps at 200Mi/s from 100Mi in a pods cgroup of 1024Mi
// beside a steady 100Mi pod, and the recorded pressure-agent evicted it at 3.4 s (its local reads then
// lose it at 3.5 s): from then on the reads show the pods cgroup with the steady pod only.
func agentEvictedRecording() Recording {
	span := 10 * time.Second
	r := Recording{Node: "rec", Start: t0, End: t0.Add(span)}
	hogAt := func(d time.Duration) int64 { return 100*mi + int64(200*mi*d.Seconds()) }
	evicted, gone := 3400*time.Millisecond, 3500*time.Millisecond
	hog := RecordedPod{Info: PodInfo{Candidate: pod("hog", 64*mi, 0, Ramp{}).Candidate, Since: t0.Add(-time.Minute),
		End: EndEvicted, By: ActorAgent, Ended: t0.Add(evicted), Released: t0.Add(4 * time.Second)}}
	steady := RecordedPod{Info: PodInfo{Candidate: pod("steady", 64*mi, 0, Ramp{}).Candidate, Since: t0.Add(-time.Minute)}}
	for d := time.Duration(0); d <= span; d += time.Second {
		at := t0.Add(d)
		steady.Samples = append(steady.Samples, PodSample{Stats: stats("steady", 100*mi, at), Seen: at})
		used := int64(100 * mi)
		if d < gone {
			used += hogAt(d)
			hog.Samples = append(hog.Samples, PodSample{Stats: stats("hog", hogAt(d), at), Seen: at})
		}
		r.PodsMemory = append(r.PodsMemory, MemorySample{At: at, Available: 1024*mi - used, Capacity: 1024 * mi})
		r.NodeMemory = append(r.NodeMemory, MemorySample{At: at, Available: 6 << 30, Capacity: 8 << 30})
	}
	for d := time.Duration(0); d <= span; d += 100 * time.Millisecond {
		pods := map[string]signal.PodStats{"uid-steady": stats("steady", 100*mi, t0)}
		ws := int64(100 * mi)
		if d < gone {
			pods["uid-hog"] = stats("hog", hogAt(d), t0)
			ws += hogAt(d)
		}
		r.Local = append(r.Local, LocalSample{At: t0.Add(d), Pods: pods,
			Memory: Memory{NodeCapacity: 8 << 30, NodeWorkingSet: 2 << 30, PodsCapacity: 1024 * mi, PodsWorkingSet: ws, PodsKnown: true}})
	}
	r.Pods = []RecordedPod{hog, steady}
	return r
}

// TestTheAgentRunKeepsAPodTheRecordedAgentEvicted: the simulated agent stands in for the recorded one,
// so a pod the recorded agent evicted keeps counting in its run (extrapolated past the agent's last read
// of it) until the run evicts it itself; the recording lists the eviction as pressure-agent's; and the
// agent's view releases the pod where its local reads lose it (3.5 s), not where the Summary's
// snapshots do (4 s): in between, the reads lack the pod's memory while a run that kept it would not yet
// count it back.
func TestTheAgentRunKeepsAPodTheRecordedAgentEvicted(t *testing.T) {
	o := Options{Kubelet: noNotifier(hard200(t)), Timing: DefaultTiming(),
		NewAgent:      PolicyAgent(policy.DefaultConfig(), policy.LadderConfig{}, hard200(t), decision.Semantics{}, nil),
		AgentTiming:   AgentTiming{SyncPeriod: 10 * time.Second, PollInterval: 100 * time.Millisecond, PollDelta: 32 * mi},
		AgentTaintKey: "pressure.kube-pressure.io/evicting"}
	res := Simulate(agentEvictedRecording().World(), o)
	got := evictions(res, RunAgent)
	if len(got) != 1 || got[0].pod != "default/hog" || got[0].by != ActorAgent {
		t.Fatalf("agent run evictions %v, want hog alone, by pressure-agent", got)
	}
	if len(res.Recorded) != 1 || res.Recorded[0].By != ActorAgent || res.Recorded[0].Pod != "default/hog" {
		t.Errorf("recorded evictions %+v, want hog's by pressure-agent", res.Recorded)
	}
	w := agentEvictedRecording().World().(agentViewer).AgentView()
	for _, p := range w.Pods() {
		if p.Candidate.Name == "hog" && !p.Released.Equal(t0.Add(3500*time.Millisecond)) {
			t.Errorf("the agent's view releases hog at +%s, want +3.5s (its reads lose it there)", p.Released.Sub(t0))
		}
	}
}

// TestTheAgentRunReleasesAPodAsTheRecordingDid: with RecordedReleases, the run's eviction of a pod the
// recorded agent evicted gives its memory back as long after the request as the recording shows (the
// local reads lose hog 0.1 s after the ledger's time, so 0.1 s plus the time per request), not after
// Timing.AgentEviction; without it, after Timing.AgentEviction.
func TestTheAgentRunReleasesAPodAsTheRecordingDid(t *testing.T) {
	for _, tc := range []struct {
		name     string
		recorded bool
		want     time.Duration // from the run's eviction to the signal back above the agent's threshold
	}{
		{"the recorded release", true, 300 * time.Millisecond},
		{"Timing.AgentEviction", false, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Kubelet: noNotifier(hard200(t)), Timing: DefaultTiming(),
				NewAgent:      PolicyAgent(policy.DefaultConfig(), policy.LadderConfig{}, hard200(t), decision.Semantics{}, nil),
				AgentTiming:   AgentTiming{SyncPeriod: 10 * time.Second, PollInterval: 100 * time.Millisecond, PollDelta: 32 * mi},
				AgentTaintKey: "pressure.kube-pressure.io/evicting", RecordedReleases: tc.recorded}
			o.Timing.AgentEviction, o.Timing.AgentRequest = 2*time.Second, 200*time.Millisecond
			res := Simulate(agentEvictedRecording().World(), o)
			var evicted, back time.Time
			for _, r := range res.Runs {
				for _, e := range r.Events {
					switch {
					case r.Name != RunAgent:
					case e.Kind == KindEvict && evicted.IsZero():
						evicted = e.At
					case e.Kind == KindCrossing && !evicted.IsZero() && back.IsZero() && strings.Contains(e.Detail, "back above the pressure-agent"):
						back = e.At
					}
				}
			}
			if evicted.IsZero() || back.IsZero() {
				t.Fatalf("no eviction (%s) or no way back above the threshold (%s) in the agent's run", evicted, back)
			}
			if got := back.Sub(evicted); got != tc.want {
				t.Errorf("the signal is back above the agent's threshold %s after the eviction, want %s", got, tc.want)
			}
		})
	}
}
