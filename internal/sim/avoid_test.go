package sim

import (
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/policy"
)

// owned is p as a pod of the workload kind/name.
func owned(p ModelPod, kind, name string) ModelPod {
	p.Candidate.OwnerKind, p.Candidate.OwnerName = kind, name
	return p
}

// leaker is a pod that leaks from start on: alone on the model's node it crosses the agent's default
// threshold (456Mi available of the 2Gi pods cgroup) about 6 s after its start.
func leaker(name string, start time.Duration) ModelPod {
	p := pod(name, 0, 0, Ramp{Start: 1480 * mi, Rate: 20 * mi, Until: 1900 * mi})
	p.Start = start
	return p
}

var testLoop = policy.LoopConfig{Cooldown: time.Minute, LoopCooldown: 5 * time.Minute}

func avoidingOptions(t *testing.T, ladder policy.LadderConfig, loop *policy.LoopConfig) Options {
	return Options{Kubelet: hard200(t), Timing: DefaultTiming(),
		NewAgent:    PolicyAgent(policy.DefaultConfig(), ladder, hard200(t), decision.Semantics{}, loop),
		AgentTiming: AgentTiming{SyncPeriod: 10 * time.Second, PollInterval: 100 * time.Millisecond, PollDelta: 32 * mi}}
}

// timeline is the agent run's evict, avoid, kept-off and refused events as "offset kind subject".
func timeline(res Result) []string {
	var out []string
	for _, e := range res.Runs[len(res.Runs)-1].Events {
		switch e.Kind {
		case KindEvict, KindAvoid, KindKept, KindRefused:
			out = append(out, FormatOffset(time.Duration(e.Offset))+" "+string(e.Kind)+" "+e.Subject)
		}
	}
	return out
}

func TestTheAgentRunShowsTheAvoidancesOfItsEvictions(t *testing.T) {
	web := "Deployment/default/web"
	for _, tc := range []struct {
		name   string
		pods   []ModelPod
		ladder policy.LadderConfig
		loop   *policy.LoopConfig
		want   []string
		// detail is a part of the last avoid or kept-off event's detail.
		detail string
	}{
		{name: "an eviction of an owned pod starts the owner's avoidance for the cooldown",
			pods: []ModelPod{owned(leaker("web-1", 0), "Deployment", "web")}, loop: &testLoop,
			want:   []string{"+0:05.7 evict default/web-1", "+0:05.7 avoid " + web},
			detail: "avoidance of Deployment/default/web until +1:05.7"},
		{name: "a replacement that appears during the avoidance is kept off the node",
			pods:   []ModelPod{owned(leaker("web-1", 0), "Deployment", "web"), owned(leaker("web-2", 30*time.Second), "Deployment", "web")},
			loop:   &testLoop,
			want:   []string{"+0:05.7 evict default/web-1", "+0:05.7 avoid " + web, "+0:30.0 kept-off default/web-2"},
			detail: "not scheduled here: Deployment/default/web avoids the node until +1:05.7 (the cooldown after an eviction"},
		{name: "a replacement that appears once the avoidance ended comes onto the node, and its eviction is a loop",
			pods: []ModelPod{owned(leaker("web-1", 0), "Deployment", "web"), owned(leaker("web-2", 70*time.Second), "Deployment", "web"),
				owned(leaker("web-3", 90*time.Second), "Deployment", "web")},
			loop: &testLoop,
			want: []string{"+0:05.7 evict default/web-1", "+0:05.7 avoid " + web, "+1:15.7 evict default/web-2",
				"+1:15.7 avoid " + web, "+1:30.0 kept-off default/web-3"},
			detail: "until +6:15.7 (escalated: an eviction loop"},
		{name: "a bare pod's eviction avoids nothing",
			pods: []ModelPod{leaker("bare", 0), leaker("later", 30*time.Second)}, loop: &testLoop,
			want: []string{"+0:05.7 evict default/bare", "+0:35.7 evict default/later"}},
		{name: "a DaemonSet's pod is bound to its node: its eviction avoids nothing",
			pods: []ModelPod{owned(leaker("ds-1", 0), "DaemonSet", "ds"), owned(leaker("ds-2", 30*time.Second), "DaemonSet", "ds")},
			loop: &testLoop,
			want: []string{"+0:05.7 evict default/ds-1", "+0:35.7 evict default/ds-2"}},
		{name: "with the loop breaker off nothing is avoided",
			pods: []ModelPod{owned(leaker("web-1", 0), "Deployment", "web"), owned(leaker("web-2", 30*time.Second), "Deployment", "web")},
			want: []string{"+0:05.7 evict default/web-1", "+0:35.7 evict default/web-2"}},
		{name: "an eviction a PodDisruptionBudget refused takes its avoidance back",
			pods: []ModelPod{withPDB(owned(leaker("web-1", 0), "Deployment", "web")), owned(leaker("web-2", 30*time.Second), "Deployment", "web")},
			loop: &testLoop, ladder: policy.LadderConfig{AllowDelete: false},
			// The kubelet, which ignores PodDisruptionBudgets, evicts web-1; web-2 comes onto the node.
			want: []string{"+0:05.7 refused default/web-1", "+0:16.8 refused default/web-1", "+0:18.5 evict default/web-1",
				"+0:35.7 evict default/web-2", "+0:35.7 avoid " + web}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := model(tc.pods...)
			res := Simulate(m.World(rand.New(rand.NewSource(1))), avoidingOptions(t, tc.ladder, tc.loop))
			got := timeline(res)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("agent run (-want +got):\n%s", diff)
			}
			if tc.detail == "" {
				return
			}
			var last string
			for _, e := range res.Runs[1].Events {
				if e.Kind == KindAvoid || e.Kind == KindKept {
					last = e.Detail
				}
			}
			if !strings.Contains(last, tc.detail) {
				t.Errorf("last avoidance detail %q, want it to contain %q", last, tc.detail)
			}
		})
	}
}

func withPDB(p ModelPod) ModelPod {
	p.PDB = true
	return p
}

// TestTheSimulatedAvoidanceIsWhatTheLaddersRuleForesees holds the simulator to the agent's ladder: for
// each eviction the simulated agent carried out, the avoidance (and the loop) it shows is what
// policy.History.AvoidanceAfter, the ladder's rule that explain shows, gives for the same eviction on the
// history of the evictions recorded before it.
func TestTheSimulatedAvoidanceIsWhatTheLaddersRuleForesees(t *testing.T) {
	pods := []ModelPod{owned(leaker("web-1", 0), "Deployment", "web"), owned(leaker("web-2", 70*time.Second), "Deployment", "web"),
		owned(leaker("web-3", 90*time.Second), "Deployment", "web"), owned(leaker("db-1", 3*time.Minute), "StatefulSet", "db"),
		leaker("bare", 4*time.Minute), owned(leaker("web-4", 7*time.Minute), "Deployment", "web")}
	m := model(pods...)
	m.Duration = 8 * time.Minute
	byUID := map[string]ModelPod{}
	for _, p := range pods {
		byUID[p.Candidate.UID] = p
	}
	res := Simulate(m.World(rand.New(rand.NewSource(1))), avoidingOptions(t, policy.LadderConfig{}, &testLoop))
	recorded := policy.NewHistory(testLoop)
	var seen, loops int
	for _, e := range events(res, RunAgent, KindEvict) {
		p := byUID[e.Eviction.UID]
		entry := policy.HistoryEntry{UID: p.Candidate.UID, Namespace: p.Candidate.Namespace, Name: p.Candidate.Name,
			Owner: podWorkload(p.Candidate), Signal: e.Eviction.Signal, At: e.At, Created: m.Start.Add(p.Start)}
		av, loop, isLoop := recorded.AvoidanceAfter(entry)
		var want *AvoidanceInfo
		if !av.Until.IsZero() {
			want = &AvoidanceInfo{Owner: av.Owner.String(), Until: av.Until, UntilOffset: Duration(av.Until.Sub(m.Start))}
			if isLoop {
				want.Loop = &LoopInfo{Evictions: loop.Evictions, Since: Duration(loop.Since)}
				loops++
			}
		}
		if diff := cmp.Diff(want, e.Eviction.Avoidance); diff != "" {
			t.Errorf("eviction of %s at %s: avoidance (-foreseen +simulated):\n%s", e.Subject, FormatOffset(time.Duration(e.Offset)), diff)
		}
		recorded.Record(entry)
		seen++
	}
	if seen != 5 || loops != 2 {
		t.Errorf("%d evictions, %d loops; want 5 evictions (web-1, web-2, db-1, bare, web-4), 2 loops (web-2, web-4)", seen, loops)
	}
}
