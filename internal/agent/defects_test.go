package agent

// The policy defects of issue 11, each a test that failed before its fix.

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/loopbreaker/loopbreakertest"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/threshold"
)

func deletedAt(ts time.Time) func(*corev1.Pod) {
	return func(p *corev1.Pod) {
		t := metav1.NewTime(ts)
		p.DeletionTimestamp = &t
	}
}

func TestTerminatingPodIsCreditedWhatItHadWhenFirstSeenNeverMore(t *testing.T) {
	h := newHarness(t, nil)
	h.pods.set(pod("hog", "u-hog", "besteffort", "", deletedAt(t0.Add(time.Minute))), pod("burst", "u-burst", "burstable", "50Mi"))
	h.tree.setPod("u-hog", "besteffort", 200*mi)
	h.tree.setPod("u-burst", "burstable", 300*mi) // available 1548Mi: no pressure
	h.sync(time.Second)
	// The terminating pod grows to 1700Mi: available 48Mi. Crediting its 200Mi leaves 248Mi, below our
	// 356Mi: the other pod must go (crediting 1700Mi, as before, evicted nothing).
	h.tree.setPod("u-hog", "besteffort", 1700*mi)
	res := h.sync(time.Second)
	if d := cmp.Diff(h.ladder.names(), []string{"burst"}); d != "" {
		t.Errorf("evicted (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
}

func TestTerminatingPodPastItsGracePeriodIsNoLongerCredited(t *testing.T) {
	h := newHarness(t, nil)
	// Its grace period ended a minute ago: whatever holds it, its memory is not about to be freed.
	h.pods.set(pod("hog", "u-hog", "besteffort", "", deletedAt(t0.Add(-time.Minute))), pod("burst", "u-burst", "burstable", "50Mi"))
	h.tree.setPod("u-hog", "besteffort", 1700*mi)
	h.tree.setPod("u-burst", "burstable", 300*mi) // available 48Mi
	res := h.sync(time.Second)
	if d := cmp.Diff(h.ladder.names(), []string{"burst"}); d != "" {
		t.Errorf("evicted (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
}

// evictionAPI is a fake clientset that accepts evictions and records them.
func evictionAPI(calls *[]string) *fake.Clientset {
	c := fake.NewClientset()
	c.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "eviction" {
			*calls = append(*calls, a.(k8stesting.CreateAction).GetObject().(metav1.Object).GetName())
		}
		return true, nil, nil
	})
	return c
}

func TestLedgerEntryOlderThanTheInFlightTTLNoLongerBlocksTheEviction(t *testing.T) {
	// A pod killed on the node 3 minutes ago (the API was down) restarted and hogs memory again. The
	// agent's in-flight TTL is 2 minutes; the ledger must follow the same rule.
	h := newHarness(t, nil)
	ctx := context.Background()
	var store loopbreakertest.Store
	l := policy.NewHistory(policy.LoopConfig{})
	l.Record(policy.HistoryEntry{UID: "u-stress", Namespace: "default", Name: "stress", Rung: string(actuate.RungCgroupKill), At: t0.Add(-3 * time.Minute)})
	var b bytes.Buffer
	if err := loopbreaker.WriteLedger(&b, l); err != nil {
		t.Fatal(err)
	}
	store.Data = b.Bytes()
	ledger, err := loopbreaker.LoadLedger(ctx, &store, DefaultConfig("node-a").Ledger, nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls []string
	h.agent.Ladder = &actuate.Ladder{Evictor: &actuate.Evictor{Client: evictionAPI(&calls)}, Ledger: ledger, Clock: h.clock}
	scenario1(h, 1550*mi)
	res := h.sync(time.Second)
	if d := cmp.Diff(calls, []string{"stress"}); d != "" {
		t.Errorf("eviction API calls (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
}

func TestPodWithoutStatsIsNotEvictedByThePressurePolicyButByTheKubeletPolicy(t *testing.T) {
	for _, tc := range []struct {
		name   string
		policy policy.Name
		want   []string
	}{
		{"pressure policy skips the pending pod: it frees nothing", policy.Pressure, []string{"hog"}},
		{"kubelet policy keeps the kubelet's no-stats-first quirk", policy.Kubelet, []string{"pending"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(s *Settings) { s.Policy = tc.policy })
			pending := pod("pending", "u-pending", "burstable", "100Mi", priority(1000))
			pending.Status.Phase = corev1.PodPending
			h.pods.set(pending, pod("hog", "u-hog", "besteffort", ""))
			h.tree.setPod("u-hog", "besteffort", 1960*mi) // available 88Mi: below the kubelet's 100Mi too; no cgroup for pending
			res := h.sync(time.Second)
			if d := cmp.Diff(h.ladder.names(), tc.want); d != "" {
				t.Errorf("evicted (-got +want):\n%s\ntrace:\n%s", d, res.trace())
			}
		})
	}
}

func TestPDBRefusalUnderASoftThresholdDoesNotStallTheNextPod(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.KillLead = 0 })
	grace := "1s"
	cfg, err := threshold.ParseConfig(threshold.Input{EvictionHardSet: true, EvictionHard: map[string]string{"memory.available": "100Mi"},
		EvictionSoft: map[string]string{"allocatableMemory.available": "600Mi"}, EvictionSoftGracePeriod: map[string]string{"allocatableMemory.available": grace}})
	if err != nil {
		t.Fatal(err)
	}
	h.agent.KubeletConfig = cfg
	h.ladder.results = []actuate.Result{{Outcome: actuate.OutcomeBlockedByPDB, Rung: actuate.RungEviction,
		Attempts: []actuate.Attempt{{Rung: actuate.RungEviction, Outcome: actuate.OutcomeBlockedByPDB}}}}
	h.pods.set(pod("a", "u-a", "besteffort", ""), pod("b", "u-b", "besteffort", ""))
	h.tree.setPod("u-a", "besteffort", 1000*mi)
	h.tree.setPod("u-b", "besteffort", 600*mi) // available 448Mi: below the soft 600Mi, above the hard 356Mi
	h.sync(time.Second)                        // soft threshold met, grace running
	h.sync(1500 * time.Millisecond)            // grace passed: a, refused by its PDB
	res := h.sync(time.Second)                 // a is paused: b covers the need
	if d := cmp.Diff(h.ladder.names(), []string{"a", "b"}); d != "" {
		t.Errorf("requests (-got +want):\n%s\ntrace:\n%s", d, res.trace())
	}
}

func TestKubeletPolicyRespectsMaxEvictionsPerMinute(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.Policy, s.MaxEvictionsPerMinute = policy.Kubelet, 3 })
	var pods []*corev1.Pod
	for _, n := range []string{"a", "b", "c", "d", "e", "f"} {
		pods = append(pods, pod("be-"+n, "u-"+n, "besteffort", ""))
		h.tree.setPod("u-"+n, "besteffort", 330*mi) // 1980Mi: available 68Mi, below the kubelet's 100Mi
	}
	for i := 0; i < 5; i++ {
		h.pods.set(pods[i:]...) // each evicted pod leaves the list (its memory stays charged: fixture)
		h.sync(time.Second)
	}
	if d := cmp.Diff(h.ladder.names(), []string{"be-a", "be-b", "be-c"}); d != "" {
		t.Errorf("requests in 5s (-got +want):\n%s", d)
	}
}

func TestCgroupKillAfterAnUnreachableAPIKeepsTheBackoff(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.KillLead = 0 })
	h.ladder.results = []actuate.Result{{Outcome: actuate.OutcomeKilled, Rung: actuate.RungCgroupKill, Killed: 1,
		Attempts: []actuate.Attempt{{Rung: actuate.RungEviction, Outcome: actuate.OutcomeUnavailable}, {Rung: actuate.RungCgroupKill, Outcome: actuate.OutcomeKilled}}}}
	h.pods.set(pod("a", "u-a", "besteffort", ""), pod("b", "u-b", "besteffort", ""))
	h.tree.setPod("u-a", "besteffort", 1000*mi)
	h.tree.setPod("u-b", "besteffort", 900*mi) // available 148Mi: a covers the need
	h.sync(time.Second)                        // a: the API is unreachable, the ladder kills it on the node
	h.tree.setPod("u-a", "besteffort", 50*mi)  // a restarted small, b grew: available 98Mi
	h.tree.setPod("u-b", "besteffort", 1900*mi)
	h.sync(500 * time.Millisecond) // inside the backoff the kill did not reset
	if d := cmp.Diff(h.ladder.names(), []string{"a"}); d != "" {
		t.Fatalf("requests within the backoff (-got +want):\n%s", d)
	}
	h.sync(time.Second) // backoff over
	if d := cmp.Diff(h.ladder.names(), []string{"a", "b"}); d != "" {
		t.Errorf("requests after the backoff (-got +want):\n%s", d)
	}
}

func TestPIDNeedIsCoveredInThreads(t *testing.T) {
	h := newHarness(t, func(s *Settings) { s.Headroom = policy.Headroom{} })
	// pid.available is 32768 − 209 tasks = 32559 on the procfs fixture: 441 threads short of 33000.
	h.agent.KubeletConfig = kubeletConfig(t, map[string]string{"memory.available": "100Mi", "pid.available": "33000"})
	h.pods.set(pod("a", "u-a", "besteffort", ""), pod("b", "u-b", "besteffort", ""), pod("c", "u-c", "besteffort", ""))
	for uid, threads := range map[string]int{"u-a": 600, "u-b": 10, "u-c": 10} {
		h.tree.setPod(uid, "besteffort", 10*mi)
		h.tree.setTasks(uid, 1, threads)
	}
	res := h.sync(time.Second)
	if d := cmp.Diff(h.ladder.names(), []string{"a"}); d != "" {
		t.Errorf("evicted (-got +want): a's 600 threads cover the 441 needed:\n%s\ntrace:\n%s", d, res.trace())
	}
}
