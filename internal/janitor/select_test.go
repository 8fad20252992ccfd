package janitor

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func defaultPolicy() Policy {
	return Policy{TTL: 10 * time.Minute, KeepPerOwner: 0, Reasons: []string{ReasonEvicted}}
}

func TestSelect(t *testing.T) {
	now := t0
	ttl := 10 * time.Minute
	tests := []struct {
		name   string
		pods   []PodInfo
		policy func(*Policy)
		want   []verdict
	}{
		{
			name: "evicted pod is deleted once the TTL from its DisruptionTarget condition has passed",
			pods: infos(evictedPod("a", "p", now.Add(-ttl))),
			want: []verdict{{Pod: "a/p", Verb: VerbDelete, At: now}},
		},
		{
			name: "pod started long ago but evicted recently waits: the TTL runs from the condition, not the start",
			pods: infos(evictedPod("a", "p", now.Add(-time.Minute))),
			want: []verdict{{Pod: "a/p", Verb: VerbWait, At: now.Add(9 * time.Minute)}},
		},
		{
			name: "without a condition the latest container termination is the eviction time",
			pods: infos(evictedPod("a", "p", now, noCondition(), func(p *v1.Pod) {
				p.Status.ContainerStatuses = []v1.ContainerStatus{
					terminatedAt("a", now.Add(-20*time.Minute)), terminatedAt("b", now.Add(-5*time.Minute)),
				}
			})),
			want: []verdict{{Pod: "a/p", Verb: VerbWait, At: now.Add(5 * time.Minute)}},
		},
		{
			name: "without condition or termination the remembered first-seen annotation is the eviction time",
			pods: infos(evictedPod("a", "p", now, noCondition(),
				annotated(AnnotationTerminalSince, now.Add(-11*time.Minute).Format(time.RFC3339)))),
			want: []verdict{{Pod: "a/p", Verb: VerbDelete, At: now.Add(-time.Minute)}},
		},
		{
			name: "a pod with no eviction time at all waits a full TTL from now",
			pods: infos(evictedPod("a", "p", now, noCondition())),
			want: []verdict{{Pod: "a/p", Verb: VerbWait, At: now.Add(ttl)}},
		},
		{
			name:   "ttl 0 deletes a pod with no eviction time as soon as it is seen",
			pods:   infos(evictedPod("a", "p", now, noCondition())),
			policy: func(p *Policy) { p.TTL = 0 },
			want:   []verdict{{Pod: "a/p", Verb: VerbDelete, At: now}},
		},
		{
			name: "running, pending and unknown pods are never deleted",
			pods: infos(
				evictedPod("a", "run", now.Add(-time.Hour), phase(v1.PodRunning, "")),
				evictedPod("a", "pend", now.Add(-time.Hour), phase(v1.PodPending, "")),
				evictedPod("a", "unk", now.Add(-time.Hour), phase(v1.PodUnknown, ReasonEvicted)),
			),
			policy: func(p *Policy) { p.TTL, p.DeleteSucceeded = 0, true },
			want: []verdict{
				{Pod: "a/pend", Verb: VerbSkip, Skip: SkipNotTerminal},
				{Pod: "a/run", Verb: VerbSkip, Skip: SkipNotTerminal},
				{Pod: "a/unk", Verb: VerbSkip, Skip: SkipNotTerminal},
			},
		},
		{
			name: "failed pods with other reasons are kept unless their reason is selected",
			pods: infos(
				evictedPod("a", "oom", now.Add(-time.Hour), phase(v1.PodFailed, "OutOfmemory")),
				evictedPod("a", "shut", now.Add(-time.Hour), phase(v1.PodFailed, "NodeShutdown")),
			),
			policy: func(p *Policy) { p.Reasons = []string{ReasonEvicted, "NodeShutdown"} },
			want: []verdict{
				{Pod: "a/shut", Verb: VerbDelete, At: now.Add(-50 * time.Minute)},
				{Pod: "a/oom", Verb: VerbSkip, Skip: SkipReasonNotSelected},
			},
		},
		{
			name: "succeeded bare and Job pods are deleted only when enabled, never those of a ReplicaSet",
			pods: infos(
				evictedPod("a", "bare", now.Add(-time.Hour), phase(v1.PodSucceeded, "")),
				evictedPod("a", "job", now.Add(-time.Hour), phase(v1.PodSucceeded, ""), ownedBy("Job", "j")),
				evictedPod("a", "rs", now.Add(-time.Hour), phase(v1.PodSucceeded, ""), ownedBy("ReplicaSet", "r")),
			),
			policy: func(p *Policy) { p.DeleteSucceeded = true },
			want: []verdict{
				{Pod: "a/bare", Verb: VerbDelete, At: now.Add(-50 * time.Minute)},
				{Pod: "a/job", Verb: VerbDelete, At: now.Add(-50 * time.Minute)},
				{Pod: "a/rs", Verb: VerbSkip, Skip: SkipSucceeded},
			},
		},
		{
			name: "succeeded pods are kept by default",
			pods: infos(evictedPod("a", "bare", now.Add(-time.Hour), phase(v1.PodSucceeded, ""))),
			want: []verdict{{Pod: "a/bare", Verb: VerbSkip, Skip: SkipSucceeded}},
		},
		{
			name: "the newest evicted pod of each owner is kept for debugging, even when its TTL has passed",
			pods: infos(
				evictedPod("a", "old", now.Add(-3*time.Hour), ownedBy("ReplicaSet", "r")),
				evictedPod("a", "mid", now.Add(-2*time.Hour), ownedBy("ReplicaSet", "r")),
				evictedPod("a", "new", now.Add(-1*time.Hour), ownedBy("ReplicaSet", "r")),
				evictedPod("a", "other", now.Add(-3*time.Hour), ownedBy("ReplicaSet", "s")),
				evictedPod("a", "bare", now.Add(-3*time.Hour)),
			),
			policy: func(p *Policy) { p.KeepPerOwner = 1 },
			want: []verdict{
				{Pod: "a/bare", Verb: VerbDelete, At: now.Add(-3*time.Hour + ttl)},
				{Pod: "a/old", Verb: VerbDelete, At: now.Add(-3*time.Hour + ttl)},
				{Pod: "a/mid", Verb: VerbDelete, At: now.Add(-2*time.Hour + ttl)},
				{Pod: "a/new", Verb: VerbSkip, Skip: SkipKeptPerOwner, At: now.Add(-time.Hour + ttl)},
				{Pod: "a/other", Verb: VerbSkip, Skip: SkipKeptPerOwner, At: now.Add(-3*time.Hour + ttl)},
			},
		},
		{
			name: "a waiting pod counts among the newest N, so the older expired one is deleted",
			pods: infos(
				evictedPod("a", "old", now.Add(-time.Hour), ownedBy("ReplicaSet", "r")),
				evictedPod("a", "fresh", now.Add(-time.Minute), ownedBy("ReplicaSet", "r")),
			),
			policy: func(p *Policy) { p.KeepPerOwner = 1 },
			want: []verdict{
				{Pod: "a/old", Verb: VerbDelete, At: now.Add(-time.Hour + ttl)},
				{Pod: "a/fresh", Verb: VerbSkip, Skip: SkipKeptPerOwner, At: now.Add(9 * time.Minute)},
			},
		},
		{
			name: "excluded and not-included namespaces, label selector and preserve annotation are skipped",
			pods: infos(
				evictedPod("kube-system", "sys", now.Add(-time.Hour)),
				evictedPod("other", "o", now.Add(-time.Hour)),
				evictedPod("team", "nolabel", now.Add(-time.Hour)),
				evictedPod("team", "kept", now.Add(-time.Hour), withLabels("tier", "web"), annotated(AnnotationPreserve, "true")),
				evictedPod("team", "go", now.Add(-time.Hour), withLabels("tier", "web")),
			),
			policy: func(p *Policy) {
				p.Namespaces = []string{"team", "kube-system"}
				p.ExcludeNamespaces = []string{"kube-system"}
				p.Selector = labels.SelectorFromSet(labels.Set{"tier": "web"})
			},
			want: []verdict{
				{Pod: "team/go", Verb: VerbDelete, At: now.Add(-50 * time.Minute)},
				{Pod: "kube-system/sys", Verb: VerbSkip, Skip: SkipNamespace},
				{Pod: "other/o", Verb: VerbSkip, Skip: SkipNamespace},
				{Pod: "team/kept", Verb: VerbSkip, Skip: SkipPreserved},
				{Pod: "team/nolabel", Verb: VerbSkip, Skip: SkipLabelSelector},
			},
		},
		{
			name: "deletions are ordered podgc-like: evicted first, then oldest eviction, then name",
			pods: infos(
				evictedPod("b", "shutdown-oldest", now.Add(-5*time.Hour), phase(v1.PodFailed, "NodeShutdown")),
				evictedPod("b", "evicted-new", now.Add(-1*time.Hour)),
				evictedPod("a", "evicted-old", now.Add(-2*time.Hour)),
				evictedPod("c", "evicted-old", now.Add(-2*time.Hour)),
			),
			policy: func(p *Policy) { p.TTL, p.Reasons = 0, []string{ReasonEvicted, "NodeShutdown"} },
			want: []verdict{
				{Pod: "a/evicted-old", Verb: VerbDelete, At: now.Add(-2 * time.Hour)},
				{Pod: "c/evicted-old", Verb: VerbDelete, At: now.Add(-2 * time.Hour)},
				{Pod: "b/evicted-new", Verb: VerbDelete, At: now.Add(-1 * time.Hour)},
				{Pod: "b/shutdown-oldest", Verb: VerbDelete, At: now.Add(-5 * time.Hour)},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := defaultPolicy()
			if tc.policy != nil {
				tc.policy(&p)
			}
			got := verdicts(Select(tc.pods, now, p))
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("Select() verdicts (-got +want):\n%s", diff)
			}
		})
	}
}

func TestSelectTerminatingPods(t *testing.T) {
	cases := []struct {
		name       string
		finalizers bool
		evictedAt  time.Time
		want       verdict
	}{
		{name: "terminating pod with finalizers is left to their owners", finalizers: true, evictedAt: t0.Add(-time.Hour),
			want: verdict{Pod: "a/p", Verb: VerbSkip, Skip: SkipTerminating}},
		{name: "terminating pod without finalizers past its TTL is deleted", evictedAt: t0.Add(-time.Hour),
			want: verdict{Pod: "a/p", Verb: VerbDelete}},
		{name: "terminating pod without finalizers within its TTL waits like any other", evictedAt: t0.Add(-time.Minute),
			want: verdict{Pod: "a/p", Verb: VerbWait}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pod := FromPod(evictedPod("a", "p", tc.evictedAt, func(p *v1.Pod) {
				ts := metaTime(t0.Add(-time.Second))
				p.DeletionTimestamp = &ts
				if tc.finalizers {
					p.Finalizers = []string{"example.com/hold"}
				}
			}))
			want := tc.want
			if want.Verb != VerbSkip {
				want.At = tc.evictedAt.Add(defaultPolicy().TTL)
			}
			got := verdicts(Select([]PodInfo{pod}, t0, defaultPolicy()))
			if diff := cmp.Diff(got, []verdict{want}); diff != "" {
				t.Errorf("Select() (-got +want):\n%s", diff)
			}
		})
	}
}

func TestSelectDeletesExactlyAtTheTTLBoundary(t *testing.T) {
	pods := infos(evictedPod("a", "p", t0))
	p := defaultPolicy()
	if got := Select(pods, t0.Add(p.TTL-time.Nanosecond), p)[0].Verb; got != VerbWait {
		t.Errorf("one nanosecond before the TTL: verb %s; want %s", got, VerbWait)
	}
	if got := Select(pods, t0.Add(p.TTL), p)[0].Verb; got != VerbDelete {
		t.Errorf("at the TTL: verb %s; want %s", got, VerbDelete)
	}
}

func TestSelectMarksOnlyPodsWithoutAnEvictionTime(t *testing.T) {
	pods := infos(evictedPod("a", "with", t0), evictedPod("a", "without", t0, noCondition()))
	for _, a := range Select(pods, t0, defaultPolicy()) {
		if want := a.Pod.Name == "without"; a.RecordFirstSeen != want {
			t.Errorf("pod %s: RecordFirstSeen %v; want %v", a.Pod.Name, a.RecordFirstSeen, want)
		}
	}
}

// TestSelectIsDeterministic checks that the input order never reaches the output.
func TestSelectIsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	reasons := []string{ReasonEvicted, "NodeShutdown", "OutOfmemory"}
	var pods []PodInfo
	for i := range 300 {
		owner := ownedBy("ReplicaSet", string(rune('a'+rng.IntN(5))))
		evicted := t0.Add(-time.Duration(rng.IntN(8)) * 5 * time.Minute) // many ties
		pods = append(pods, FromPod(evictedPod("ns", "p"+string(rune('A'+i%26))+string(rune('a'+i/26)), evicted,
			owner, phase(v1.PodFailed, reasons[rng.IntN(len(reasons))]))))
	}
	p := Policy{TTL: 10 * time.Minute, KeepPerOwner: 2, Reasons: reasons[:2]}
	want := verdicts(Select(pods, t0, p))
	for range 20 {
		rng.Shuffle(len(pods), func(i, j int) { pods[i], pods[j] = pods[j], pods[i] })
		if diff := cmp.Diff(verdicts(Select(pods, t0, p)), want); diff != "" {
			t.Fatalf("Select() depends on input order (-got +want):\n%s", diff)
		}
	}
}

func TestNextDueIsTheEarliestWait(t *testing.T) {
	pods := infos(evictedPod("a", "late", t0.Add(-time.Minute)), evictedPod("a", "soon", t0.Add(-9*time.Minute)),
		evictedPod("a", "due", t0.Add(-time.Hour)))
	got, ok := NextDue(Select(pods, t0, defaultPolicy()))
	if want := t0.Add(time.Minute); !ok || !got.Equal(want) {
		t.Errorf("NextDue() = %v, %v; want %v, true", got, ok, want)
	}
	if _, ok := NextDue(nil); ok {
		t.Errorf("NextDue(nil) reported a time")
	}
}

func terminatedAt(name string, at time.Time) v1.ContainerStatus {
	return v1.ContainerStatus{Name: name, State: v1.ContainerState{Terminated: &v1.ContainerStateTerminated{
		ExitCode: 137, FinishedAt: metaTime(at),
	}}}
}
