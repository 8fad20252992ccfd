package agent

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/actuate"
)

type memStore struct{ data []byte }

func (m *memStore) Load(context.Context) ([]byte, error) { return m.data, nil }
func (m *memStore) Save(_ context.Context, d []byte) error {
	m.data = append([]byte(nil), d...)
	return nil
}

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

type loopEvents struct{ loops []string }

func (e *loopEvents) Loop(l actuate.Loop)       { e.loops = append(e.loops, l.Owner.Name+" "+l.Pod.Name) }
func (e *loopEvents) TaintChanged(bool, string) {}

func ownedPod(name, uid string, created time.Time) *corev1.Pod {
	p := pod(name, uid, "besteffort", "")
	p.CreationTimestamp = metav1.NewTime(created)
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "hog-1", UID: "rs-1", Controller: ptr.To(true)}}
	return p
}

func TestBreakerTaintsDuringPressureAndCooldownAndReportsReplacementLoops(t *testing.T) {
	ctx := context.Background()
	ledger, err := actuate.LoadLedger(ctx, &memStore{}, actuate.LedgerPolicy{Cooldown: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	tn, ev := &fakeTainter{}, &loopEvents{}
	b := &Breaker{Ledger: ledger, Tainter: tn, Events: ev, Cooldown: 30 * time.Second}
	old := ownedPod("hog-a", "u-a", t0.Add(-time.Hour))
	sibling := ownedPod("hog-b", "u-b", t0.Add(-time.Hour)) // already here before the eviction: no loop
	mustSync := func(now time.Time, pressure bool, pods ...*corev1.Pod) int {
		n, err := b.Sync(ctx, now, pressure, "allocatableMemory.available", pods)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	mustSync(t0, true, old, sibling)
	if err := ledger.Record(ctx, actuate.Entry{UID: "u-a", Namespace: "default", Name: "hog-a", At: t0,
		Owner: actuate.ControllerOf(old), Signal: "allocatableMemory.available"}); err != nil {
		t.Fatal(err)
	}
	mustSync(t0.Add(time.Second), false, sibling) // evicted pod gone: settled; cool-down running
	if !tn.on {
		t.Fatalf("taint removed during the cool-down")
	}
	mustSync(t0.Add(40*time.Second), false, sibling)
	if tn.on {
		t.Fatalf("taint still on after the cool-down")
	}
	replacement := ownedPod("hog-c", "u-c", t0.Add(41*time.Second))
	if n := mustSync(t0.Add(42*time.Second), false, sibling, replacement); n != 1 {
		t.Errorf("%d loops, want 1 for the replacement", n)
	}
	if n := mustSync(t0.Add(43*time.Second), false, sibling, replacement); n != 0 {
		t.Errorf("%d loops on the next sync, want the replacement counted once", n)
	}
	if !tn.on {
		t.Errorf("no taint after a loop")
	}
	mustSync(t0.Add(42*time.Second+time.Minute), false, sibling, replacement)
	if d := cmp.Diff(tn.changes, []string{"add allocatableMemory.available", "remove", "add allocatableMemory.available", "remove"}); d != "" {
		t.Errorf("taint changes (-got +want):\n%s", d)
	}
	if d := cmp.Diff(ev.loops, []string{"hog-1 hog-c"}); d != "" {
		t.Errorf("loop events (-got +want):\n%s", d)
	}
}
