package agent

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/loopbreaker/loopbreakertest"
	"github.com/kube-pressure/pressure/internal/owner"
	"github.com/kube-pressure/pressure/internal/policy"
)

type fakeTainter struct {
	on      bool
	changes []string
}

func (f *fakeTainter) Ensure(_ context.Context, v string) (bool, error) {
	if f.on {
		return false, nil
	}
	f.on = true
	f.changes = append(f.changes, "add "+v)
	return true, nil
}

func (f *fakeTainter) Remove(context.Context) (bool, error) {
	if !f.on {
		return false, nil
	}
	f.on = false
	f.changes = append(f.changes, "remove")
	return true, nil
}

type taintEventLog struct{ changes []string }

func (e *taintEventLog) TaintChanged(added bool, v string) {
	e.changes = append(e.changes, map[bool]string{true: "added ", false: "removed "}[added]+v)
}

type paramLog struct{ writes [][]policy.Avoidance }

func (p *paramLog) Write(_ context.Context, as []policy.Avoidance) error {
	p.writes = append(p.writes, as)
	return nil
}

func ownedPod(name, uid string, created time.Time) *corev1.Pod {
	p := pod(name, uid, "besteffort", "")
	p.CreationTimestamp = metav1.NewTime(created)
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "hog-1", UID: "rs-1", Controller: ptr.To(true)}}
	return p
}

func TestBreakerTaintsOnlyWhileWantedAndExpiresAvoidances(t *testing.T) {
	ctx := context.Background()
	params := &paramLog{}
	ledger, err := loopbreaker.LoadLedger(ctx, &loopbreakertest.Store{}, policy.LoopConfig{Cooldown: time.Minute}, params)
	if err != nil {
		t.Fatal(err)
	}
	tn, ev := &fakeTainter{}, &taintEventLog{}
	b := &Breaker{Ledger: ledger, Tainter: tn, Events: ev}
	old := ownedPod("hog-a", "u-a", t0.Add(-time.Hour))
	sibling := ownedPod("hog-b", "u-b", t0.Add(-time.Hour))
	// want is the policy's wanted taint (policy.Plan.Taint: on under pressure and for its hysteresis).
	mustSync := func(now time.Time, want bool, pods ...*corev1.Pod) {
		t.Helper()
		if err := b.Sync(ctx, now, policy.Taint{Want: want, Value: "allocatableMemory.available"}, pods); err != nil {
			t.Fatal(err)
		}
	}
	mustSync(t0, true, old, sibling)
	if !tn.on {
		t.Fatalf("no taint under pressure")
	}
	if _, _, err := ledger.Record(ctx, policy.HistoryEntry{UID: "u-a", Namespace: "default", Name: "hog-a", At: t0,
		Owner: owner.ControllerOf(old), Signal: "allocatableMemory.available"}); err != nil {
		t.Fatal(err)
	}
	mustSync(t0.Add(5*time.Second), true, sibling) // pressure gone, the policy's hysteresis still wants it
	if !tn.on {
		t.Fatalf("taint removed while wanted")
	}
	mustSync(t0.Add(11*time.Second), false, sibling)
	if tn.on {
		t.Fatalf("taint still on when no longer wanted, while the owner's avoidance runs")
	}
	if got := b.Avoiding(t0.Add(11 * time.Second)); got != 1 {
		t.Errorf("avoiding %d owners during the cooldown, want 1", got)
	}
	mustSync(t0.Add(time.Minute), false, sibling)
	if got := b.Avoiding(t0.Add(time.Minute)); got != 0 {
		t.Errorf("avoiding %d owners after the cooldown, want 0", got)
	}
	if d := cmp.Diff(tn.changes, []string{"add allocatableMemory.available", "remove"}); d != "" {
		t.Errorf("taint changes (-got +want):\n%s", d)
	}
	if d := cmp.Diff(ev.changes, []string{"added allocatableMemory.available", "removed allocatableMemory.available"}); d != "" {
		t.Errorf("taint events (-got +want):\n%s", d)
	}
	// The first sync publishes the empty list: a restarted agent clears what it left behind.
	want := [][]policy.Avoidance{nil, {{Owner: owner.ControllerOf(old), Until: t0.Add(time.Minute)}}, nil}
	if d := cmp.Diff(params.writes, want); d != "" {
		t.Errorf("published avoidances (-got +want):\n%s", d)
	}
}

func TestBreakerSettlesTheEvictionsOfPodsThatRunNoMore(t *testing.T) {
	ctx := context.Background()
	ledger, err := loopbreaker.LoadLedger(ctx, &loopbreakertest.Store{}, policy.LoopConfig{}, &paramLog{})
	if err != nil {
		t.Fatal(err)
	}
	running, failed := ownedPod("hog-a", "u-a", t0), ownedPod("hog-b", "u-b", t0)
	failed.Status.Phase = corev1.PodFailed
	for _, p := range []*corev1.Pod{running, failed, ownedPod("hog-c", "u-c", t0)} {
		if _, _, err := ledger.Record(ctx, policy.HistoryEntry{UID: string(p.UID), Namespace: "default", Name: p.Name,
			At: t0, Owner: owner.ControllerOf(p), Signal: "allocatableMemory.available"}); err != nil {
			t.Fatal(err)
		}
	}
	b := &Breaker{Ledger: ledger, Tainter: &fakeTainter{}}
	if err := b.Sync(ctx, t0.Add(time.Second), policy.Taint{}, []*corev1.Pod{running, failed}); err != nil {
		t.Fatal(err)
	}
	settled := map[string]bool{}
	for _, e := range ledger.Entries() {
		settled[e.UID] = e.SettledAt != nil
	}
	// hog-c is listed no more and hog-b is terminal: both finished; hog-a still runs.
	if d := cmp.Diff(settled, map[string]bool{"u-a": false, "u-b": true, "u-c": true}); d != "" {
		t.Errorf("settled by uid (-got +want):\n%s", d)
	}
}

// breakerCalls records the pod lists the loop breaker was given.
type breakerCalls struct{ lists [][]string }

func (b *breakerCalls) Sync(_ context.Context, _ time.Time, _ policy.Taint, pods []*corev1.Pod) error {
	var names []string
	for _, p := range pods {
		names = append(names, p.Name)
	}
	b.lists = append(b.lists, names)
	return nil
}
func (b *breakerCalls) Tainted() bool          { return false }
func (b *breakerCalls) Avoiding(time.Time) int { return 0 }

// listThenSync is a pod lister whose informer completes its first list right after a List: the list
// it gave was partial, though the informer reports synced by the time the sync goes on.
type listThenSync struct {
	*fakePods
	synced *bool
}

func (l listThenSync) List() ([]*corev1.Pod, error) {
	pods, err := l.fakePods.List()
	*l.synced = true
	return pods, err
}

// TestTheBreakerSettlesOnlyByAListTakenAfterThePodInformerSynced: a pod list taken before the informer
// synced is partial even when the informer reports synced a moment later; the loop breaker would settle
// the ledger's evictions of the pods missing from it (seen under load: a restarted agent evicted the pod
// its predecessor had killed, its ledger entry settled by the partial list).
func TestTheBreakerSettlesOnlyByAListTakenAfterThePodInformerSynced(t *testing.T) {
	h := newHarness(t, nil)
	calls := &breakerCalls{}
	h.agent.Breaker = calls
	synced := false
	h.agent.PodsSynced = func() bool { return synced }
	h.agent.Pods = listThenSync{h.pods, &synced} // lists nothing until the informer synced
	h.sync(time.Second)
	if len(calls.lists) != 0 {
		t.Fatalf("the breaker ran with the list %v taken before the informer synced; want it not to run", calls.lists)
	}
	h.pods.set(pod("stress", "u-stress", "besteffort", ""))
	h.sync(time.Second)
	if d := cmp.Diff(calls.lists, [][]string{{"stress"}}); d != "" {
		t.Errorf("breaker's lists (-got +want):\n%s", d)
	}
}
