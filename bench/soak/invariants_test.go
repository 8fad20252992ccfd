package soak

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/test/oomkill"
)

var t0 = time.Date(2026, 12, 4, 23, 0, 0, 0, time.UTC)

func at(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }

// wantViolations fails unless got has n violations, each of invariant inv.
func wantViolations(t *testing.T, got []Violation, n int, inv string) {
	t.Helper()
	if len(got) != n {
		t.Errorf("got %d violations %v, want %d", len(got), got, n)
	}
	for _, v := range got {
		if v.Invariant != inv {
			t.Errorf("violation %v, want invariant %q", v, inv)
		}
	}
}

func TestNoForeignOOMKill(t *testing.T) {
	own := oomkill.Kill{Attributed: true, Constraint: "CONSTRAINT_MEMCG", OOMMemcg: "/kubepods/burstable/pod1/c1",
		TaskMemcg: "/kubepods/burstable/pod1/c1", Task: "stress", PID: 1}
	podLimit := own
	podLimit.OOMMemcg = "/kubepods/burstable/pod1"
	guaranteed := own
	guaranteed.OOMMemcg, guaranteed.TaskMemcg = "/kubepods/pod2/c2", "/kubepods/pod2/c2"
	pods := own
	pods.OOMMemcg = "/kubepods"
	qos := own
	qos.OOMMemcg = "/kubepods/besteffort"
	global := own
	global.OOMMemcg, global.Global = "", true
	hidden := oomkill.Kill{PID: 9}
	for _, tc := range []struct {
		name  string
		kills []oomkill.Kill
		rise  int
		want  int
	}{
		{"a container hitting its own limit is allowed", []oomkill.Kill{own}, 1, 0},
		{"a pod hitting its pod limit is allowed", []oomkill.Kill{podLimit, guaranteed}, 2, 0},
		{"no kill is allowed", nil, 0, 0},
		{"the pods cgroup's limit hit is a violation", []oomkill.Kill{own, pods}, 2, 1},
		{"a QoS class's limit hit is a violation", []oomkill.Kill{qos}, 1, 1},
		{"a global OOM is a violation", []oomkill.Kill{global}, 0, 1},
		{"a kill whose cgroup the kernel hid is a violation", []oomkill.Kill{hidden}, 1, 1},
		{"a counter rising past the kernel log's kills is a violation", []oomkill.Kill{own}, 2, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantViolations(t, NoForeignOOMKill(tc.kills, "kubepods", tc.rise), tc.want, InvNoForeignOOMKill)
		})
	}
}

func TestNoCriticalEvicted(t *testing.T) {
	for _, tc := range []struct {
		name string
		evs  []Eviction
		want int
	}{
		{"evictions of ordinary pods are allowed", []Eviction{{Namespace: "a", Pod: "hog-0", By: "agent"}}, 0},
		{"the agent evicting the critical pod is a violation", []Eviction{{Namespace: "kube-system", Pod: "crit", By: "agent", Critical: true}}, 1},
		{"the kubelet evicting the critical pod is a violation too", []Eviction{{Namespace: "kube-system", Pod: "crit", By: "kubelet", Critical: true}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) { wantViolations(t, NoCriticalEvicted(tc.evs), tc.want, InvNoCriticalEvicted) })
	}
}

func TestNoPodEvictedTwice(t *testing.T) {
	restart := Window{From: at(10), To: at(25).Add(KubeletWatchReconnect)}
	for _, tc := range []struct {
		name      string
		evs       []Eviction
		reconnect Window
		want      int
		notes     int
	}{
		{"distinct pods once each are allowed", []Eviction{{Namespace: "a", Pod: "hog-0", By: "agent"}, {Namespace: "a", Pod: "hog-1", By: "kubelet"},
			{Namespace: "b", Pod: "hog-0", By: "agent"}}, Window{}, 0, 0},
		{"two agent requests for one pod are a violation", []Eviction{{Namespace: "a", Pod: "hog-0", By: "agent", At: at(1)},
			{Namespace: "a", Pod: "hog-0", By: "agent", At: at(9)}}, Window{}, 1, 0},
		{"the agent and the kubelet evicting one pod is a violation", []Eviction{{Namespace: "a", Pod: "hog-0", By: "agent", At: at(1)},
			{Namespace: "a", Pod: "hog-0", By: "kubelet", At: at(14)}}, Window{}, 1, 0},
		{"the kubelet evicting a pod the agent evicted as the API server came back counts once, with a note",
			[]Eviction{{Namespace: "a", Pod: "hog-0", By: "agent", At: at(26)}, {Namespace: "a", Pod: "hog-0", By: "kubelet", At: at(39)}}, restart, 0, 1},
		{"the kubelet evicting it after the watch's reconnect bound is a violation",
			[]Eviction{{Namespace: "a", Pod: "hog-0", By: "agent", At: at(26)}, {Namespace: "a", Pod: "hog-0", By: "kubelet", At: at(86)}}, restart, 1, 0},
		{"an agent eviction accepted before the API server stopped is a violation with the kubelet's",
			[]Eviction{{Namespace: "a", Pod: "hog-0", By: "agent", At: at(9)}, {Namespace: "a", Pod: "hog-0", By: "kubelet", At: at(30)}}, restart, 1, 0},
		{"the agent evicting a pod after the kubelet did is a violation even in the restart",
			[]Eviction{{Namespace: "a", Pod: "hog-0", By: "kubelet", At: at(26)}, {Namespace: "a", Pod: "hog-0", By: "agent", At: at(30)}}, restart, 1, 0},
		{"the agent's DELETE then the kubelet's eviction is a violation even in the restart",
			[]Eviction{{Namespace: "a", Pod: "hog-0", By: "agent", Rung: "delete", At: at(26)}, {Namespace: "a", Pod: "hog-0", By: "kubelet", At: at(30)}}, restart, 1, 0},
		{"two agent requests and the kubelet's are a violation even in the restart",
			[]Eviction{{Namespace: "a", Pod: "hog-0", By: "agent", At: at(26)}, {Namespace: "a", Pod: "hog-0", By: "agent", At: at(28)},
				{Namespace: "a", Pod: "hog-0", By: "kubelet", At: at(30)}}, restart, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, notes := NoPodEvictedTwice(tc.evs, tc.reconnect)
			wantViolations(t, v, tc.want, InvNoDoubleEviction)
			if len(notes) != tc.notes {
				t.Errorf("notes %q, want %d", notes, tc.notes)
			}
		})
	}
}

func TestPDBKept(t *testing.T) {
	s := func(sec int, allowed int32) PDBSample {
		return PDBSample{At: at(sec), Namespace: "a", Name: "pdb", DisruptionsAllowed: allowed}
	}
	ev := func(sec int, by string) Eviction {
		return Eviction{Namespace: "a", Pod: "pdb-x" + time.Duration(sec).String(), By: by, At: at(sec), PDB: "pdb"}
	}
	del := func(sec int) Eviction {
		e := ev(sec, "agent")
		e.Rung = "delete"
		return e
	}
	for _, tc := range []struct {
		name    string
		samples []PDBSample
		evs     []Eviction
		want    int
	}{
		{"an eviction the budget allowed is kept", []PDBSample{s(0, 1)}, []Eviction{ev(3, "agent")}, 0},
		{"an agent eviction when the budget allowed none is a violation", []PDBSample{s(0, 1), s(2, 0)}, []Eviction{ev(3, "agent")}, 1},
		{"a second agent eviction past the budget is a violation", []PDBSample{s(0, 1)}, []Eviction{ev(3, "agent"), ev(4, "agent")}, 1},
		{"the kubelet's hard evictions are not judged", []PDBSample{s(0, 0)}, []Eviction{ev(3, "kubelet")}, 0},
		{"an eviction before any sample is not judged", []PDBSample{s(5, 0)}, []Eviction{ev(3, "agent")}, 0},
		{"the agent's DELETE after the budget refused a hard eviction is not judged", []PDBSample{s(0, 0)}, []Eviction{del(3)}, 0},
		{"an eviction after the agent's DELETE took the budget's last disruption is a violation",
			[]PDBSample{s(0, 1)}, []Eviction{del(3), ev(4, "agent")}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) { wantViolations(t, PDBKept(tc.samples, tc.evs), tc.want, InvPDBKept) })
	}
}

func TestShellsCollected(t *testing.T) {
	ttl := 10 * time.Minute
	for _, tc := range []struct {
		name   string
		shells []Shell
		want   int
	}{
		{"a shell within TTL plus a minute is allowed", []Shell{{Namespace: "a", Pod: "p", FinishedAt: at(-10*60 - 59)}}, 0},
		{"a bare shell past TTL plus a minute is a violation", []Shell{{Namespace: "a", Pod: "p", FinishedAt: at(-11*60 - 1)}}, 1},
		{"the newest shell of its owner is kept by the janitor (keepPerOwner 1)", []Shell{
			{Namespace: "a", Pod: "old", Owner: "rs", FinishedAt: at(-20 * 60)}, {Namespace: "a", Pod: "new", Owner: "rs", FinishedAt: at(-15 * 60)}}, 1},
		{"the newest shell of each owner is kept", []Shell{
			{Namespace: "a", Pod: "x", Owner: "rs1", FinishedAt: at(-20 * 60)}, {Namespace: "a", Pod: "y", Owner: "rs2", FinishedAt: at(-20 * 60)}}, 0},
		{"a newer shell still within its TTL is the one kept: the older past it is a violation", []Shell{
			{Namespace: "a", Pod: "old", Owner: "rs", FinishedAt: at(-20 * 60)}, {Namespace: "a", Pod: "new", Owner: "rs", FinishedAt: at(-60)}}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantViolations(t, ShellsCollected(tc.shells, t0, ttl, 1), tc.want, InvShellsCollected)
		})
	}
	if v := ShellsCollected([]Shell{{Namespace: "a", Pod: "p", Owner: "rs", FinishedAt: at(-20 * 60)}}, t0, ttl, 0); len(v) != 1 {
		t.Errorf("keepPerOwner 0 keeps nothing: %v", v)
	}
}

func TestEvidenceForEach(t *testing.T) {
	msg := EvidenceEvent{Namespace: "a", Text: "Deleted pod hog-1 (node n, Failed/Evicted at ...)"}
	ann := EvidenceEvent{Namespace: "a", Text: `[{"pod":"hog-2","namespace":"a"}]`}
	for _, tc := range []struct {
		name      string
		collected []string
		evidence  []EvidenceEvent
		want      int
	}{
		{"a shell named in a message or an annotation has its evidence", []string{"a/hog-1", "a/hog-2"}, []EvidenceEvent{msg, ann}, 0},
		{"a shell with no Event is a violation", []string{"a/hog-3"}, []EvidenceEvent{msg, ann}, 1},
		{"an Event of another namespace does not count", []string{"b/hog-1"}, []EvidenceEvent{msg}, 1},
		{"a prefix of another pod's name does not count", []string{"a/hog-"}, []EvidenceEvent{msg, ann}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantViolations(t, EvidenceForEach(tc.collected, tc.evidence), tc.want, InvEvidence)
		})
	}
}

func TestViolationNamesTheInvariant(t *testing.T) {
	v := NoCriticalEvicted([]Eviction{{Namespace: "kube-system", Pod: "crit", By: "agent", Critical: true}})[0]
	if !strings.HasPrefix(v.String(), "invariant 3 no critical pod evicted: critical pod evicted: kube-system/crit") {
		t.Errorf("String() = %q", v)
	}
}

func TestWhyAgrees(t *testing.T) {
	agent := Eviction{Namespace: "a", Pod: "hog-0", By: "agent"}
	kubelet := Eviction{Namespace: "a", Pod: "hog-1", By: "kubelet"}
	restart := Window{From: at(10), To: at(25).Add(KubeletWatchReconnect)}
	backAgent, backKubelet := Eviction{Namespace: "a", Pod: "hog-2", By: "agent", At: at(26)}, Eviction{Namespace: "a", Pod: "hog-2", By: "kubelet", At: at(39)}
	agentLate, kubeletLate := Eviction{Namespace: "a", Pod: "hog-3", By: "agent", At: at(26)}, Eviction{Namespace: "a", Pod: "hog-3", By: "kubelet", At: at(99)}
	for _, tc := range []struct {
		name     string
		evs      []Eviction
		verdicts map[string]string
		want     int
	}{
		{"matching causes agree", []Eviction{agent, kubelet},
			map[string]string{"a/hog-0": "EvictedByPressureAgent", "a/hog-1": "EvictedByKubelet"}, 0},
		{"the agent's eviction called the kubelet's is a violation", []Eviction{agent},
			map[string]string{"a/hog-0": "EvictedByKubelet"}, 1},
		{"an eviction why could not explain is a violation", []Eviction{kubelet}, map[string]string{"a/hog-1": "why: pod not found"}, 1},
		{"an eviction why was not asked about is a violation", []Eviction{kubelet}, nil, 1},
		{"a pod evicted twice is left to invariant 3", []Eviction{agent, agent}, nil, 0},
		{"a pair counted once may be named for the agent's eviction", []Eviction{backAgent, backKubelet},
			map[string]string{"a/hog-2": "EvictedByPressureAgent"}, 0},
		{"a pair counted once may be named for the kubelet's eviction", []Eviction{backAgent, backKubelet},
			map[string]string{"a/hog-2": "EvictedByKubelet"}, 0},
		{"a pair counted once that why cannot explain is a violation", []Eviction{backAgent, backKubelet},
			map[string]string{"a/hog-2": "why: pod not found"}, 1},
		{"a pair outside the reconnect window is left to invariant 3", []Eviction{agentLate, kubeletLate}, nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) { wantViolations(t, WhyAgrees(tc.evs, tc.verdicts, restart), tc.want, InvWhy) })
	}
}

func TestSchedulesAgain(t *testing.T) {
	ours := "pressure.kube-pressure.io/evicting:NoSchedule (seen 0s to 8s)"
	oursLong := "pressure.kube-pressure.io/evicting:NoSchedule (seen 0s to 49s)"
	kubelets := "node.kubernetes.io/memory-pressure:NoSchedule (seen 0s to 45s)"
	for _, tc := range []struct {
		name   string
		calm   bool
		took   time.Duration
		taints []string
		fault  FaultKind
		want   int
	}{
		{"a probe running soon after calm keeps the promise", true, 3 * time.Second, nil, "", 0},
		{"a probe running just within the promise keeps it", true, 30 * time.Second, []string{ours}, "", 0},
		{"a probe running late is a violation", true, 31 * time.Second, nil, "", 1},
		{"a probe never running is a violation", true, -1, nil, "", 1},
		{"a capped episode is not judged", false, -1, nil, "", 0},
		{"the agent's taint past the promise is a violation, whatever the fault", true, 50 * time.Second, []string{oursLong}, FaultAPIServerStop, 1},
		{"a late probe after the API server's restart with no taint seen is its recovery", true, 50 * time.Second, nil, FaultAPIServerStop, 0},
		{"a late probe after a kubelet restart with no taint past the promise is its recovery", true, 50 * time.Second, []string{ours}, FaultKubeletRestart, 0},
		{"a late probe after a containerd restart with no taint seen is its recovery", true, -1, nil, FaultContainerdRestart, 0},
		{"a late probe after a restart, held by the kubelet's taint, is a violation", true, 50 * time.Second, []string{kubelets}, FaultAPIServerStop, 1},
		{"a late probe after the agent was killed is a violation", true, 50 * time.Second, nil, FaultAgentSIGKILL, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantViolations(t, SchedulesAgain(tc.calm, tc.took, tc.taints, 10*time.Second, tc.fault), tc.want, InvSchedulesAgain)
		})
	}
	if key, last, ok := parseTaintSeen(oursLong); !ok || key != "pressure.kube-pressure.io/evicting" || last != 49*time.Second {
		t.Errorf("parseTaintSeen(%q) = %q, %s, %t", oursLong, key, last, ok)
	}
	s := taintsSeen{}
	s.add([]corev1.Taint{{Key: "pressure.kube-pressure.io/evicting", Effect: corev1.TaintEffectNoSchedule}}, 1500*time.Millisecond)
	if _, last, ok := parseTaintSeen(s.list()[0]); !ok || last != 2*time.Second {
		t.Errorf("parseTaintSeen does not read taintsSeen.list's %q: %s, %t", s.list()[0], last, ok)
	}
}

func TestSimulateAgrees(t *testing.T) {
	evs := []Eviction{{Namespace: "a", Pod: "hog-0", By: "agent"}, {Namespace: "a", Pod: "hog-1", By: "kubelet"}}
	shorter, longer := LeadTolerance(2 * time.Second)[0], LeadTolerance(2 * time.Second)[1]
	phase := PhaseTolerance(time.Second)[2]
	for _, tc := range []struct {
		name      string
		predicted []string
		near      map[string][]string
		faulted   bool
		want      int
		note      bool
	}{
		{"the same victims agree", []string{"a/hog-0"}, nil, false, 0, false},
		{"a victim simulate does not predict is a violation", nil, nil, false, 1, false},
		{"a victim only simulate predicts is a violation", []string{"a/hog-0", "a/steady-burstable"}, nil, false, 1, false},
		{"an episode with a fault is not judged", nil, nil, true, 0, false},
		{"a lead decision at its margin agrees at a lead 10% shorter, with a note", []string{"a/pdb-1", "a/hog-0"},
			map[string][]string{shorter: {"a/hog-0"}, longer: {"a/pdb-1", "a/hog-0"}}, false, 0, true},
		{"victims that differ at every lead within 10% are a violation", []string{"a/pdb-1", "a/hog-0"},
			map[string][]string{shorter: {"a/pdb-1", "a/hog-0"}, longer: {"a/pdb-1", "a/hog-0"}}, false, 1, false},
		{"a lead decision that only another phase of the agent's reads takes agrees, with a note", []string{"a/hog-0", "a/hog-1"},
			map[string][]string{shorter: {"a/hog-0", "a/hog-1"}, phase: {"a/hog-0"}}, false, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, note := SimulateAgrees(evs, tc.predicted, tc.near, tc.faulted)
			wantViolations(t, v, tc.want, InvSimulate)
			named := shorter
			if _, ok := tc.near[phase]; ok {
				named = phase
			}
			if (note != "") != tc.note || tc.note && !strings.Contains(note, named) {
				t.Errorf("note %q, want one naming %s: %t", note, named, tc.note)
			}
		})
	}
}

func TestPhaseToleranceTriesEveryEighthOfThePollButTheConfiguredPhase(t *testing.T) {
	want := []string{"timing.agentPhase=125ms", "timing.agentPhase=250ms", "timing.agentPhase=375ms", "timing.agentPhase=500ms",
		"timing.agentPhase=625ms", "timing.agentPhase=750ms", "timing.agentPhase=875ms"}
	if got := PhaseTolerance(time.Second); !slices.Equal(got, want) {
		t.Errorf("PhaseTolerance(1s) = %q, want %q", got, want)
	}
	if got := Tolerance(2*time.Second, time.Second); !slices.Equal(got, append(LeadTolerance(2*time.Second), want...)) {
		t.Errorf("Tolerance(2s, 1s) = %q, want the lead's two and the seven phases", got)
	}
}

func TestLeadToleranceIsTenPercentEachWay(t *testing.T) {
	if got, want := LeadTolerance(2*time.Second), []string{"agent.evictionLead=1.8s", "agent.evictionLead=2.2s"}; !slices.Equal(got, want) {
		t.Errorf("LeadTolerance(2s) = %q, want %q", got, want)
	}
}

// The budget allowed 1 before the agent's eviction at 10.0 s and 0 after it; the read started at 9.9 s and
// returned at 10.2 s, after the eviction. Stamped when it returned, it is not a sample before the
// eviction, and the eviction the budget allowed is no violation.
func TestAPDBReadIsStampedWhenItReturns(t *testing.T) {
	t0 := time.Date(2026, 12, 5, 12, 37, 0, 0, time.UTC)
	clock := t0.Add(9900 * time.Millisecond)
	now := func() time.Time { return clock }
	get := func() (int32, error) { clock = clock.Add(300 * time.Millisecond); return 0, nil }
	p, err := readPDB("ns", "pdb", get, now)
	if err != nil {
		t.Fatal(err)
	}
	if want := t0.Add(10200 * time.Millisecond); !p.At.Equal(want) {
		t.Errorf("sample stamped %s, want %s (when the read returned)", p.At, want)
	}
	before := PDBSample{At: t0.Add(7 * time.Second), Namespace: "ns", Name: "pdb", DisruptionsAllowed: 1}
	evs := []Eviction{{Namespace: "ns", Pod: "pdb-a", By: "agent", PDB: "pdb", At: t0.Add(10 * time.Second)}}
	wantViolations(t, PDBKept([]PDBSample{before, p}, evs), 0, InvPDBKept)
}
