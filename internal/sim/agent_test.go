package sim

import (
	"github.com/kube-pressure/pressure/internal/decision"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

// fakeAgent evicts the pod named victim once allocatableMemory.available is below level, and records
// what it was given.
type fakeAgent struct {
	level  int64
	victim string
	kill   bool
	steps  []AgentInput
}

func (a *fakeAgent) Step(in AgentInput) AgentPlan {
	a.steps = append(a.steps, in)
	plan := AgentPlan{Thresholds: map[signal.Signal]int64{signal.AllocatableMemoryAvailable: a.level}}
	o := in.Snapshot.Observations[signal.AllocatableMemoryAvailable]
	plan.Taint = o.Available < a.level
	for _, c := range in.Candidates {
		if c.Name == a.victim && o.Available < a.level && in.Deletion[c.UID].IsZero() {
			plan.Evictions = append(plan.Evictions, AgentEviction{UID: c.UID, Signal: signal.AllocatableMemoryAvailable,
				Why: "fake", GraceSeconds: 1})
			if a.kill {
				plan.Kills = append(plan.Kills, c.UID)
			}
		}
	}
	return plan
}

func agentOptions(t *testing.T, a *fakeAgent) Options {
	return Options{Kubelet: hard200(t), Timing: DefaultTiming(), NewAgent: func() Agent { return a },
		AgentTiming:   AgentTiming{SyncPeriod: 10 * time.Second, PollInterval: 100 * time.Millisecond, PollDelta: 32 * mi},
		AgentTaintKey: "example.com/pressure"}
}

func TestTheAgentWakesOnItsThresholdAndEvictsBeforeTheKubelet(t *testing.T) {
	// 2048Mi − (1600Mi + 2Mi/s) crosses the agent's 400Mi after 24 s, the kubelet's 200Mi after 124 s:
	// the agent's poll wakes it at the first tick below its threshold; the kubelet alone evicts 100 s
	// later.
	m := model(pod("leak", 0, 0, Ramp{Start: 1600 * mi, Rate: 2 * mi}))
	m.Duration = 3 * time.Minute
	a := &fakeAgent{level: 400 * mi, victim: "leak"}
	res := Simulate(m.World(rand.New(rand.NewSource(1))), agentOptions(t, a))
	got := evictions(res, RunAgent)
	want := []evicted{{"default/leak", 24100 * time.Millisecond, ActorAgent}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(evicted{})); diff != "" {
		t.Errorf("agent run evictions (-want +got):\n%s", diff)
	}
	taints := events(res, RunAgent, KindTaint)
	if len(taints) == 0 || taints[0].Subject != "example.com/pressure:NoSchedule" || !strings.HasPrefix(taints[0].Detail, "added") {
		t.Errorf("agent taints %+v, want example.com/pressure added", taints)
	}
	if k := evictions(res, RunKubelet); len(k) != 1 || k[0].pod != "default/leak" || k[0].at != 124100*time.Millisecond {
		t.Errorf("kubelet run evictions %v, want the leak evicted by the kubelet alone at 124.1s", k)
	}
}

func TestAPodTheAgentEvictedIsTerminatingUntilItsMemoryIsFree(t *testing.T) {
	// Below both thresholds from the start. The agent evicts at 0 s through the API, which takes 15 s
	// to free the memory here; its syncs every 2 s see the pod terminating (its deletion timestamp the
	// request plus the 1s grace). The kubelet's first sync, at 5 s, still ranks it and evicts it too.
	m := model(pod("big", 0, 0, Ramp{Start: 1900 * mi}))
	a := &fakeAgent{level: 400 * mi, victim: "big"}
	o := agentOptions(t, a)
	o.Timing.FirstSync, o.Timing.AgentEviction, o.AgentTiming.SyncPeriod = 5*time.Second, 15*time.Second, 2*time.Second
	res := Simulate(m.World(rand.New(rand.NewSource(1))), o)
	got := events(res, RunAgent, KindEvict)
	if len(got) != 2 || got[0].Actor != ActorAgent || got[1].Actor != ActorKubelet || !got[1].Eviction.Terminating {
		t.Fatalf("agent run evictions %+v, want the agent's at 0s, then the kubelet's of the terminating pod at 5s", got)
	}
	var deletion time.Time
	for _, in := range a.steps {
		if d, ok := in.Deletion["uid-big"]; ok {
			deletion = d
		}
	}
	if !deletion.Equal(t0.Add(time.Second)) {
		t.Errorf("the agent saw the pod's deletion timestamp %v, want the request plus its 1s grace", deletion)
	}
}

func TestAKillFreesThePodsMemoryAtOnce(t *testing.T) {
	m := model(pod("big", 0, 0, Ramp{Start: 1900 * mi}))
	a := &fakeAgent{level: 400 * mi, victim: "big", kill: true}
	o := agentOptions(t, a)
	o.Timing.FirstSync = 500 * time.Millisecond
	res := Simulate(m.World(rand.New(rand.NewSource(1))), o)
	if k := events(res, RunAgent, KindKill); len(k) != 1 || k[0].Subject != "default/big" {
		t.Errorf("kills %+v, want default/big", k)
	}
	if got := evictions(res, RunAgent); len(got) != 1 {
		t.Errorf("evictions %v: the kubelet must not evict a pod the agent killed", got)
	}
}

func TestPolicyAgentDrivesPolicyStep(t *testing.T) {
	// pressure-agent's defaults: the kubelet's 200Mi plus 256Mi of headroom; the leak crosses 456Mi at
	// 1592Mi used, 56 s into a 1480Mi + 2Mi/s ramp (with the model's 0 other pods).
	m := model(pod("leak", 0, 0, Ramp{Start: 1480 * mi, Rate: 2 * mi}), pod("idle", 0, 0, Ramp{Start: 10 * mi}))
	o := Options{Kubelet: hard200(t), Timing: DefaultTiming(), NewAgent: PolicyAgent(policy.DefaultConfig(), policy.LadderConfig{}, hard200(t), decision.Semantics{}, nil),
		AgentTiming:   AgentTiming{SyncPeriod: 10 * time.Second, PollInterval: 100 * time.Millisecond, PollDelta: 32 * mi},
		AgentTaintKey: "pressure.kube-pressure.io/evicting"}
	res := Simulate(m.World(rand.New(rand.NewSource(1))), o)
	got := evictions(res, RunAgent)
	if len(got) != 1 || got[0].pod != "default/leak" || got[0].by != ActorAgent || got[0].at > 52*time.Second {
		t.Errorf("agent run evictions %v, want the leak by pressure-agent as it crosses 456Mi (51.1s)", got)
	}
	if len(res.AgentThresholds) == 0 || res.AgentThresholds[0].Bytes != 456*mi {
		t.Errorf("agent thresholds %+v, want 456Mi", res.AgentThresholds)
	}
}

func TestAFastRampIsEvictedByItsTimeToExhaustionAndTheTimelineSaysSo(t *testing.T) {
	// 2048Mi − (300Mi + 1Gi/s after 10 s): the pods cgroup is exhausted 1.7 s into the ramp. The poll
	// (32Mi moves) wakes the agent at every tick; after two falling steps the eviction lead (2s) acts at
	// once, far above the 456Mi threshold, so the victim dies before the memory is gone. With
	// evictionLead 0 the agent waits for 456Mi.
	run := func(lead time.Duration) []Event {
		m := model(pod("leak", 0, 0, Ramp{Start: 300 * mi, Rate: 1024 * mi, After: 10 * time.Second, Until: 1900 * mi}))
		m.Duration = 30 * time.Second
		cfg := policy.DefaultConfig()
		cfg.EvictionLead = lead
		o := Options{Kubelet: hard200(t), Timing: DefaultTiming(), NewAgent: PolicyAgent(cfg, policy.LadderConfig{}, hard200(t), decision.Semantics{}, nil),
			AgentTiming:   AgentTiming{SyncPeriod: 10 * time.Second, PollInterval: 100 * time.Millisecond, PollDelta: 32 * mi},
			AgentTaintKey: "pressure.kube-pressure.io/evicting"}
		return events(Simulate(m.World(rand.New(rand.NewSource(1))), o), RunAgent, KindEvict)
	}
	withLead, without := run(policy.DefaultEvictionLead), run(0)
	if len(withLead) != 1 || withLead[0].Actor != ActorAgent || !strings.Contains(withLead[0].Detail, "time to exhaustion") {
		t.Fatalf("with the lead: evictions %+v, want one by pressure-agent whose detail names the time to exhaustion", withLead)
	}
	if len(without) == 0 || without[0].Actor != ActorAgent || strings.Contains(without[0].Detail, "time to exhaustion") {
		t.Fatalf("without the lead: evictions %+v, want the agent's at its threshold", without)
	}
	if !(withLead[0].Offset < without[0].Offset) {
		t.Errorf("with the lead the eviction came at %s, without at %s: want it earlier", time.Duration(withLead[0].Offset), time.Duration(without[0].Offset))
	}
	t.Logf("with the lead: %s %s; without: %s %s", time.Duration(withLead[0].Offset), withLead[0].Detail, time.Duration(without[0].Offset), without[0].Detail)
}

func TestTheAgentsPhaseDelaysItsFirstSyncAndMovesItsPollsReads(t *testing.T) {
	// The leak crosses the agent's 400Mi just after 24 s (2048Mi − (1600Mi + 2Mi/s)). A poll every
	// 300ms reads at the phase and every 300ms after it: the first read below the threshold, and the
	// eviction, come at 24.3 s with phase 0 (24.0 s is the threshold itself, not below), 24.1 s with
	// 100ms and 24.2 s with 200ms.
	for _, tc := range []struct {
		phase, want time.Duration
	}{{0, 24300 * time.Millisecond}, {100 * time.Millisecond, 24100 * time.Millisecond}, {200 * time.Millisecond, 24200 * time.Millisecond}} {
		m := model(pod("leak", 0, 0, Ramp{Start: 1600 * mi, Rate: 2 * mi}))
		m.Duration = time.Minute
		a := &fakeAgent{level: 400 * mi, victim: "leak"}
		o := agentOptions(t, a)
		o.AgentTiming.PollInterval = 300 * time.Millisecond
		o.Timing.AgentPhase = tc.phase
		got := evictions(Simulate(m.World(rand.New(rand.NewSource(1))), o), RunAgent)
		if len(got) != 1 || got[0].at != tc.want {
			t.Errorf("phase %s: agent run evictions %v, want the leak's at %s", tc.phase, got, tc.want)
		}
		if len(a.steps) == 0 || a.steps[0].Now.Sub(t0) != tc.phase {
			t.Errorf("phase %s: the agent's first sync at %s, want at the phase", tc.phase, a.steps[0].Now.Sub(t0))
		}
	}
}
