package why

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/evidence"
	"github.com/kube-pressure/pressure/internal/signal"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/threshold"
)

var t0 = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

const kubeletMessage = "The node was low on resource: memory. Threshold quantity: 200Mi, available: 202184Ki. " +
	"Container stress was using 1893884Ki, request is 0, has larger consumption of memory. "

func pod(mut ...func(*Pod)) *Pod {
	p := &Pod{Namespace: "ns", Name: "p", UID: "uid-p", Node: "n", Phase: "Running", QOSClass: "BestEffort",
		Containers: []Container{{Name: "stress"}}}
	for _, m := range mut {
		m(p)
	}
	return p
}

func terminated(reason string, code int32, at time.Time) *Termination {
	return &Termination{Reason: reason, ExitCode: code, FinishedAt: at}
}

func podEvent(reason, source, msg string, at time.Time) Event {
	return Event{Namespace: "ns", Name: "p." + reason, Kind: "Pod", Object: "p", ObjectUID: "uid-p", Type: "Warning",
		Reason: reason, Message: msg, Source: source, Host: "n", First: at, Last: at, Count: 1}
}

func nodeEvent(reason, msg string, at time.Time) Event {
	return Event{Namespace: "default", Name: "n." + reason, Kind: "Node", Object: "n", Type: "Warning",
		Reason: reason, Message: msg, Source: ComponentKubelet, First: at, Last: at, Count: 1}
}

func nodeFacts(t *testing.T) *Node {
	t.Helper()
	cfg, err := threshold.ParseConfig(threshold.Input{
		EvictionHard: map[string]string{"memory.available": "200Mi"}, EvictionHardSet: true,
		KubeReserved: map[string]string{"memory": "20Gi"}, EnforceNodeAllocatable: []string{"pods"}})
	if err != nil {
		t.Fatal(err)
	}
	return &Node{Name: "n", Capacity: map[string]int64{"memory": 22 << 30}, Config: &cfg, ConfigSource: "configz"}
}

func TestDecide(t *testing.T) {
	nf := nodeFacts(t)
	neighbour := rank.Candidate{UID: "uid-q", Namespace: "ns", Name: "q", QOSClass: "Burstable", MemoryRequest: 100 << 20,
		Stats: statsOf(50 << 20)}
	cases := []struct {
		name    string
		ev      Evidence
		cause   Cause
		conf    Confidence
		sources []string // every one must appear among the evidence sources
		check   func(t *testing.T, v Verdict)
	}{
		{
			name: "pod failed with reason Evicted is a kubelet eviction with the message parsed and the ranking re-run",
			ev: Evidence{Pod: pod(func(p *Pod) {
				p.Phase, p.Reason, p.Message = "Failed", "Evicted", kubeletMessage
				p.Conditions = []Condition{{Type: "DisruptionTarget", Status: "True", Reason: "TerminationByKubelet", At: t0}}
			}), Events: []Event{podEvent("Evicted", ComponentKubelet, kubeletMessage, t0)}, Node: nf,
				Victim: &rank.Candidate{UID: "uid-p", Namespace: "ns", Name: "p", QOSClass: "BestEffort",
					Containers: []rank.Container{{Name: "stress"}}},
				Neighbours: []rank.Candidate{neighbour}},
			cause: CauseKubeletEviction, conf: High,
			sources: []string{"pod status", "pod condition DisruptionTarget", "Event Warning Evicted"},
			check: func(t *testing.T, v Verdict) {
				d := v.Eviction
				if d.Resource != "memory" || d.Threshold != "200Mi" || d.Available != "202184Ki" || len(d.Containers) != 1 ||
					d.Containers[0].Usage != "1893884Ki" {
					t.Errorf("eviction detail %+v: want memory, 200Mi, 202184Ki, stress using 1893884Ki", d)
				}
				if d.Allocatable == nil || d.Allocatable.Allocatable != "1848Mi" || d.Allocatable.PodsCgroupLimit != "2Gi" {
					t.Errorf("allocatable %+v: want 1848Mi allocatable, 2Gi pods cgroup", d.Allocatable)
				}
				if d.Ranking == nil || d.Ranking.Position != 1 || len(d.Ranking.Order) != 2 ||
					!strings.Contains(d.Ranking.Why, "exceeds request") {
					t.Errorf("ranking %+v: want the evicted pod first of 2 by exceeds request", d.Ranking)
				}
				if !containsText(d.Prevention, "memory request of at least 1893884Ki") || !containsText(d.Prevention, "memory limit") {
					t.Errorf("prevention %q: want a request and a limit", d.Prevention)
				}
			},
		},
		{
			name: "admission rejection is told apart from a pressure eviction",
			ev: Evidence{Pod: pod(func(p *Pod) {
				p.Phase, p.Reason, p.Message = "Failed", "Evicted", "Pod was rejected: The node had condition: [MemoryPressure]. "
			})},
			cause: CauseKubeletRejection, conf: High, sources: []string{"pod status"},
		},
		{
			name: "pressure-agent event wins over the Eviction API condition it caused",
			ev: Evidence{Pod: pod(func(p *Pod) {
				p.Conditions = []Condition{{Type: "DisruptionTarget", Status: "True", Reason: "EvictionByEvictionAPI", At: t0}}
			}), Events: []Event{podEvent(ReasonAgentEvicted, ComponentAgent,
				"Evicted by pressure-agent via eviction-api: signal allocatableMemory.available observed 440Mi, threshold 456Mi (hard), "+
					"rank 1 decided by exceeds request, grace 0s. "+kubeletMessage, t0)},
				Ledger: []LedgerEntry{{Signal: "allocatableMemory.available", Rung: "eviction-api", At: t0}}, Node: nf},
			cause: CauseAgentEviction, conf: High,
			sources: []string{"Event Warning PressureEviction", "ledger annotation", "pod condition DisruptionTarget"},
			check: func(t *testing.T, v Verdict) {
				d := v.Eviction
				if d.Signal != "allocatableMemory.available" || d.Rung != "eviction-api" || d.Rank != 1 || d.DecidedBy != "exceeds request" ||
					d.Available != "440Mi" || d.Threshold != "456Mi" || d.Hard == nil || !*d.Hard || len(d.Containers) != 1 {
					t.Errorf("agent eviction detail %+v", d)
				}
			},
		},
		{
			name:  "ledger entry alone names the agent with medium confidence once its Event expired",
			ev:    Evidence{Query: "gone", Ledger: []LedgerEntry{{Signal: "memory.available", Rung: "delete", At: t0}}},
			cause: CauseAgentEviction, conf: Medium, sources: []string{"ledger annotation"},
		},
		{
			name: "OOMKilled container with a memory limit was killed by its own limit",
			ev: Evidence{Pod: pod(func(p *Pod) {
				p.Containers = []Container{{Name: "stress", MemoryLimit: 128 << 20, MemoryRequest: 128 << 20, RestartCount: 1,
					LastTerminated: terminated("OOMKilled", 137, t0)}}
			})},
			cause: CauseOOMOwnLimit, conf: High, sources: []string{"pod status", "pod spec"},
		},
		{
			name: "OOMKilled container without a limit and no SystemOOM was killed for the pods cgroup",
			ev: Evidence{Pod: pod(func(p *Pod) {
				p.Phase = "Failed"
				p.Containers[0].Terminated = terminated("OOMKilled", 137, t0)
			}), Node: nf},
			cause: CauseOOMKernel, conf: Medium, sources: []string{"pod status", "pod spec", "Events on node n"},
			check: func(t *testing.T, v Verdict) {
				if !strings.Contains(v.Summary, "pods cgroup limit 2Gi") || !strings.Contains(v.Summary, "before the kubelet evicted") {
					t.Errorf("summary %q: want the pods cgroup limit, reached before the kubelet evicted", v.Summary)
				}
			},
		},
		{
			name: "pods cgroup OOM on a node without memory thresholds says the kubelet could not act",
			ev: Evidence{Pod: pod(func(p *Pod) { p.Containers[0].Terminated = terminated("OOMKilled", 137, t0) }),
				Node: &Node{Name: "n", Capacity: nf.Capacity, Config: &threshold.Config{KubeReserved: nf.Config.KubeReserved,
					EnforceNodeAllocatable: nf.Config.EnforceNodeAllocatable}}},
			cause: CauseOOMKernel, conf: Medium,
			check: func(t *testing.T, v Verdict) {
				if !strings.Contains(v.Summary, "no memory eviction threshold") {
					t.Errorf("summary %q: want the missing threshold named", v.Summary)
				}
			},
		},
		{
			name: "OOMKilled container without a limit next to a SystemOOM was killed for the whole node",
			ev: Evidence{Pod: pod(func(p *Pod) { p.Containers[0].Terminated = terminated("OOMKilled", 137, t0) }),
				NodeEvents: []Event{nodeEvent(ReasonSystemOOM, "System OOM encountered, victim process: stress, pid: 4242", t0.Add(-2*time.Second))}},
			cause: CauseOOMKernel, conf: High, sources: []string{"Event Warning SystemOOM"},
		},
		{
			name: "a SystemOOM long before the kill is not its cause",
			ev: Evidence{Pod: pod(func(p *Pod) { p.Containers[0].Terminated = terminated("OOMKilled", 137, t0) }),
				NodeEvents: []Event{nodeEvent(ReasonSystemOOM, "System OOM encountered, victim process: x, pid: 1", t0.Add(-time.Hour))}},
			cause: CauseOOMKernel, conf: Medium,
		},
		{
			name: "a neighbour OOMKilled at the same moment is flagged as the possible real victim on cgroup v1",
			ev: Evidence{Pod: pod(func(p *Pod) { p.Containers[0].Terminated = terminated("OOMKilled", 137, t0) }),
				NodePods: []Pod{*pod(func(p *Pod) {
					p.Name, p.UID = "other", "uid-o"
					p.Containers[0].Terminated = terminated("OOMKilled", 137, t0.Add(time.Second))
				})}},
			cause: CauseOOMKernel, conf: Medium,
			check: func(t *testing.T, v Verdict) {
				if !containsText(v.Notes, "ns/other/stress") || !containsText(v.Notes, "cgroup v1") {
					t.Errorf("notes %q: want the neighbour and the cgroup v1 explanation", v.Notes)
				}
			},
		},
		{
			name: "a container killed after failed liveness probes is a liveness kill",
			ev: Evidence{Pod: pod(func(p *Pod) {
				p.Containers[0].RestartCount = 1
				p.Containers[0].LastTerminated = terminated("Error", 137, t0)
			}), Events: []Event{
				podEvent(ReasonKilling, ComponentKubelet, "Container stress failed liveness probe, will be restarted", t0),
				podEvent(ReasonUnhealthy, ComponentKubelet, "Liveness probe failed: cat: /nonexistent: No such file", t0)}},
			cause: CauseLivenessProbe, conf: High, sources: []string{"Event Warning Killing", "Event Warning Unhealthy"},
		},
		{
			name:  "exit 137 with no other evidence is an unknown SIGKILL",
			ev:    Evidence{Pod: pod(func(p *Pod) { p.Containers[0].LastTerminated = terminated("Error", 137, t0) })},
			cause: CauseUnknown, conf: Low,
		},
		{
			name:  "a container that exited by itself was not killed",
			ev:    Evidence{Pod: pod(func(p *Pod) { p.Containers[0].Terminated = terminated("Error", 1, t0) })},
			cause: CauseExitedOnItsOwn, conf: Medium,
		},
		{
			name: "a terminating pod is a deletion",
			ev: Evidence{Pod: pod(func(p *Pod) { tt := t0; p.DeletionTimestamp = &tt }),
				Events: []Event{podEvent(ReasonKilling, ComponentKubelet, "Stopping container stress", t0)}},
			cause: CauseDeleted, conf: Medium, sources: []string{"pod metadata", "Event Warning Killing"},
		},
		{
			name: "a gone pod named in a controller's SuccessfulDelete was deleted by it",
			ev: Evidence{Query: "p", OwnerEvents: []Event{{Kind: "ReplicaSet", Object: "rs", Reason: ReasonCtrlDelete,
				Message: "Deleted pod: p", Source: "replicaset-controller", Last: t0}}},
			cause: CauseDeleted, conf: High, sources: []string{"Event  SuccessfulDelete on ReplicaSet/rs"},
		},
		{
			name: "a gone pod with the janitor's record of an eviction is a kubelet eviction",
			ev: Evidence{Query: "p", Janitor: &JanitorRecord{Pod: "p", Namespace: "ns", UID: "uid-p", Owner: "Deployment/d", Node: "n",
				Phase: "Failed", Reason: "Evicted", Message: strings.TrimSpace(kubeletMessage), EvictedAt: t0, EvictedAtSource: "DisruptionTarget",
				QOS: "BestEffort", Event: "ns/pressure-janitor.uid-p", Verified: true, Source: evidence.Component}, Node: nf},
			cause: CauseKubeletEviction, conf: High, sources: []string{"Event ns/pressure-janitor.uid-p"},
			check: func(t *testing.T, v Verdict) {
				if !v.PodGone || v.UID != "uid-p" || v.Eviction.Ranking == nil || !containsText(v.Eviction.Missing, "priority") {
					t.Errorf("verdict %+v: want gone, uid from the record, a ranking and the missing priority", v)
				}
			},
		},
		{
			// Issue 30, finding 4: anyone who may create Events can write an EvictedPodDeleted Event.
			name: "a gone pod with an unverified janitor record of an eviction is a medium-confidence eviction marked unverified",
			ev: Evidence{Query: "p", Janitor: &JanitorRecord{Pod: "p", Namespace: "ns", UID: "uid-p", Owner: "Deployment/d", Node: "n",
				Phase: "Failed", Reason: "Evicted", Message: strings.TrimSpace(kubeletMessage), EvictedAt: t0, EvictedAtSource: "DisruptionTarget",
				QOS: "BestEffort", Event: "ns/forged", Source: "kubelet"}, Node: nf},
			cause: CauseKubeletEviction, conf: Medium, sources: []string{"Event ns/forged"},
			check: func(t *testing.T, v Verdict) {
				if !slices.ContainsFunc(v.Evidence, func(f Fact) bool { return strings.Contains(f.Source, `UNVERIFIED: source "kubelet"`) }) {
					t.Errorf("evidence %+v: want the janitor record marked UNVERIFIED with its source", v.Evidence)
				}
			},
		},
		{
			name: "a gone pod with an unverified janitor record of a deletion is not taken as the janitor's",
			ev: Evidence{Query: "p", Janitor: &JanitorRecord{Pod: "p", Namespace: "ns", UID: "uid-p", Phase: "Succeeded",
				EvictedAt: t0, Event: "ns/pressure-janitor.x", Source: "someone"}},
			cause: CauseDeleted, conf: Low, sources: []string{"Event ns/pressure-janitor.x"},
			check: func(t *testing.T, v Verdict) {
				if !strings.Contains(v.Summary, "an unverified Event claims pressure-janitor deleted it") {
					t.Errorf("summary %q: want the claim called unverified", v.Summary)
				}
			},
		},
		{
			name: "a pod preempted by the scheduler",
			ev: Evidence{Pod: pod(func(p *Pod) {
				p.Conditions = []Condition{{Type: "DisruptionTarget", Status: "True", Reason: "PreemptionByScheduler", At: t0}}
			})},
			cause: CausePreempted, conf: High,
		},
		{
			name: "a pod terminated for a node shutdown",
			ev: Evidence{Pod: pod(func(p *Pod) {
				p.Phase, p.Reason, p.Message = "Failed", "Terminated", "Pod was terminated in response to imminent node shutdown."
			})},
			cause: CauseNodeShutdown, conf: High,
		},
		{
			name: "an Eviction API eviction without an agent record is someone else's",
			ev: Evidence{Pod: pod(func(p *Pod) {
				p.Conditions = []Condition{{Type: "DisruptionTarget", Status: "True", Reason: "EvictionByEvictionAPI", At: t0}}
			})},
			cause: CauseEvictionAPI, conf: High,
		},
		{
			name:  "a running pod whose containers never terminated was not killed",
			ev:    Evidence{Pod: pod()},
			cause: CauseUnknown, conf: Low,
			check: func(t *testing.T, v Verdict) {
				if !strings.Contains(v.Summary, "nothing killed it: the pod is Running") {
					t.Errorf("summary %q: want nothing killed it", v.Summary)
				}
			},
		},
		{
			name:  "a gone pod without any evidence is unknown and lists what was checked",
			ev:    Evidence{Query: "p", Checked: []string{"pod ns/p (GET)"}},
			cause: CauseUnknown, conf: Low,
			check: func(t *testing.T, v Verdict) {
				var b strings.Builder
				if err := Text(&b, v); err != nil || !strings.Contains(b.String(), "CHECKED") || !strings.Contains(b.String(), "pod ns/p (GET)") {
					t.Errorf("text %q (%v): want the checked list", b.String(), err)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := Decide(tc.ev)
			if v.Cause != tc.cause || v.Confidence != tc.conf {
				t.Fatalf("verdict %s (%s): %s; want %s (%s)\nevidence %+v", v.Cause, v.Confidence, v.Summary, tc.cause, tc.conf, v.Evidence)
			}
			for _, s := range tc.sources {
				if !hasSource(v, s) {
					t.Errorf("evidence %+v: no source starting %q", v.Evidence, s)
				}
			}
			if tc.check != nil {
				tc.check(t, v)
			}
			var b strings.Builder
			if err := Text(&b, v); err != nil || !strings.Contains(b.String(), string(tc.cause)) {
				t.Errorf("text output %q (%v) does not name the cause", b.String(), err)
			}
		})
	}
}

func statsOf(ws uint64) *signal.PodStats { return &signal.PodStats{MemoryWorkingSet: &ws} }

func hasSource(v Verdict, prefix string) bool {
	for _, f := range v.Evidence {
		if strings.HasPrefix(f.Source, prefix) {
			return true
		}
	}
	return false
}

func containsText(list []string, s string) bool {
	for _, x := range list {
		if strings.Contains(x, s) {
			return true
		}
	}
	return false
}
