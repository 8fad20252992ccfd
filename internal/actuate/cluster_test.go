package actuate

import (
	"context"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// Level-1 tests: a real kube-apiserver, etcd, kube-controller-manager and kube-scheduler, no kubelet.
// An evicted or deleted pod therefore gets a deletionTimestamp and stays, since no kubelet confirms.

type env struct {
	t      *testing.T
	ctx    context.Context
	client kubernetes.Interface
	config *rest.Config
	events *Events
}

func TestOnTheRealControlPlane(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	client, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	rec, stop := NewEventRecorder(ctx, client, clock.RealClock{}, "node-events")
	t.Cleanup(stop)
	base := &env{t: t, ctx: ctx, client: client, config: cp.RESTConfig(), events: &Events{Recorder: rec}}

	for _, tc := range []struct {
		name string
		run  func(e *env)
	}{
		{"eviction API evicts a running pod with our grace and records an event", testEvictsRunningPod},
		{"PDB refusal: soft never falls back, hard deletes after the wait", testPDBFallback},
		{"PDB refusal: a pod the kubelet evicts during the fallback wait keeps its Evicted shell", testPDBFallbackPodEvictedMeanwhile},
		{"UID precondition: a recreated pod with the same name is never evicted", testUIDPrecondition},
		{"429 and 503 answers through a front proxy never reach the kill rung, a refused connection does", testAnswersNeverReachTheKillRung},
		{"taint add, refresh and remove keep the other taints", testTaint},
		{"taint patch that conflicts with a concurrent writer is retried and keeps its taint", testTaintConflict},
		{"ledger survives a new instance and blocks a second request", testLedgerPersistence},
		{"dry-run touches nothing and writes a would-evict event", testDryRun},
		{"node and owner events are written", testNodeAndOwnerEvents},
		{"owner resolver lifts a controller-made pod to its Deployment", testOwnerResolver},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := *base
			e.t = t
			tc.run(&e)
		})
	}
}

func (e *env) namespace(name string) string {
	e.t.Helper()
	_, err := e.client.CoreV1().Namespaces().Create(e.ctx, &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return name
}

func (e *env) node(name string, taints ...v1.Taint) {
	e.t.Helper()
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"example.com/keep": "me"}},
		Spec: v1.NodeSpec{Taints: taints}}
	if _, err := e.client.CoreV1().Nodes().Create(e.ctx, n, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	e.events.Node = name
}

// runningPod creates a pod bound to node and marks it Running and Ready (no kubelet does it here).
func (e *env) runningPod(ns, name, node string, labels map[string]string) *v1.Pod {
	e.t.Helper()
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: v1.PodSpec{NodeName: node, AutomountServiceAccountToken: ptr.To(false),
			TerminationGracePeriodSeconds: ptr.To[int64](30),
			Containers:                    []v1.Container{{Name: "app", Image: "pause"}}},
	}
	var got *v1.Pod
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		got, err = e.client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{})
		if err != nil && strings.Contains(err.Error(), "serviceaccount") {
			return false, nil // the namespace's default service account is not there yet
		}
		return err == nil, err
	})
	if err != nil {
		e.t.Fatalf("create pod %s/%s: %v", ns, name, err)
	}
	now := metav1.Now()
	got.Status.Phase = v1.PodRunning
	got.Status.Conditions = []v1.PodCondition{{Type: v1.PodReady, Status: v1.ConditionTrue, LastTransitionTime: now}}
	got, err = e.client.CoreV1().Pods(ns).UpdateStatus(e.ctx, got, metav1.UpdateOptions{})
	if err != nil {
		e.t.Fatalf("mark pod %s/%s running: %v", ns, name, err)
	}
	return got
}

func (e *env) pod(ns, name string) *v1.Pod {
	e.t.Helper()
	p, err := e.client.CoreV1().Pods(ns).Get(e.ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func ref(p *v1.Pod) PodRef {
	return PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID}
}

func (e *env) ladder(cfg LadderConfig, l *loopbreaker.PersistentLedger) *Ladder {
	return &Ladder{Evictor: &Evictor{Client: e.client}, Events: e.events, Ledger: l, Clock: clock.RealClock{}, Config: cfg}
}

func req(p *v1.Pod, hard bool, grace int64) Request {
	return Request{Pod: ref(p), GracePeriodSeconds: grace, Hard: hard, Signal: "memory.available",
		Observed: "300Mi", Threshold: "356Mi", Rank: 1, DecidedBy: "memory",
		Annotations: map[string]string{"offending_containers": "app"}}
}

// waitEvent waits for an event with reason on the object with uid and returns it.
func (e *env) waitEvent(ns string, uid types.UID, reason string) v1.Event {
	e.t.Helper()
	var found v1.Event
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := e.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(uid)})
		if err != nil {
			return false, err
		}
		for _, ev := range list.Items {
			if ev.Reason == reason {
				found = ev
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		e.t.Fatalf("no %s event on %s/%s: %v", reason, ns, uid, err)
	}
	return found
}

func (e *env) assertTerminating(p *v1.Pod, grace int64) {
	e.t.Helper()
	got := e.pod(p.Namespace, p.Name)
	if got == nil {
		return // gone is fine too
	}
	if got.UID != p.UID || got.DeletionTimestamp == nil {
		e.t.Errorf("pod %s/%s uid %s: deletionTimestamp %v, want set", got.Namespace, got.Name, got.UID, got.DeletionTimestamp)
		return
	}
	if got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != grace {
		e.t.Errorf("pod %s/%s deletion grace %v, want %d", got.Namespace, got.Name, got.DeletionGracePeriodSeconds, grace)
	}
}

func (e *env) assertUntouched(ns, name string) {
	e.t.Helper()
	got := e.pod(ns, name)
	if got == nil {
		e.t.Errorf("pod %s/%s is gone, want it untouched", ns, name)
	} else if got.DeletionTimestamp != nil {
		e.t.Errorf("pod %s/%s uid %s is terminating (deletionTimestamp %s), want it untouched", ns, name, got.UID, got.DeletionTimestamp)
	}
}

func testEvictsRunningPod(e *env) {
	ns := e.namespace("evict")
	e.node("node-evict")
	p := e.runningPod(ns, "web", "node-evict", nil)
	res, err := e.ladder(LadderConfig{}, nil).Evict(e.ctx, req(p, false, 7))
	if err != nil || res.Outcome != OutcomeEvicted || res.Rung != RungEviction {
		e.t.Fatalf("result %+v, %v; want evicted via eviction-api", res, err)
	}
	e.assertTerminating(p, 7)
	if got := e.pod(ns, "web"); got != nil && !hasCondition(got, v1.DisruptionTarget) {
		e.t.Errorf("pod has no DisruptionTarget condition: %+v", got.Status.Conditions)
	}
	ev := e.waitEvent(ns, p.UID, ReasonPressureEviction)
	if ev.Type != v1.EventTypeWarning || !strings.Contains(ev.Message, "via eviction-api: signal memory.available observed 300Mi, threshold 356Mi (soft), rank 1 decided by memory, grace 7s") {
		e.t.Errorf("event %s %q", ev.Type, ev.Message)
	}
	if ev.Annotations["offending_containers"] != "app" || ev.Annotations[AnnotationRung] != "eviction-api" {
		e.t.Errorf("event annotations %v", ev.Annotations)
	}
	again, _ := e.ladder(LadderConfig{}, nil).Evict(e.ctx, req(p, false, 7))
	if !again.Outcome.Done() {
		e.t.Errorf("evicting a terminating pod again: %+v, want a done outcome", again)
	}
}

func hasCondition(p *v1.Pod, c v1.PodConditionType) bool {
	for _, pc := range p.Status.Conditions {
		if pc.Type == c && pc.Status == v1.ConditionTrue {
			return true
		}
	}
	return false
}

func testPDBFallback(e *env) {
	ns := e.namespace("pdb")
	e.node("node-pdb")
	p := e.guardedPod(ns, "guarded", "node-pdb")

	soft, _ := e.ladder(LadderConfig{PDBFallbackWait: 100 * time.Millisecond, AllowDelete: true}, nil).Evict(e.ctx, req(p, false, 1))
	if soft.Outcome != OutcomeBlockedByPDB || len(soft.Attempts) != 1 {
		e.t.Errorf("soft: %+v, want one blocked-by-pdb attempt", soft)
	}
	e.assertUntouched(ns, "guarded")
	e.waitEvent(ns, p.UID, ReasonPressureEvictionFailed)

	noDelete, _ := e.ladder(LadderConfig{PDBFallbackWait: 100 * time.Millisecond}, nil).Evict(e.ctx, req(p, true, 1))
	if noDelete.Outcome != OutcomeBlockedByPDB {
		e.t.Errorf("hard without allowDelete: %+v, want blocked-by-pdb", noDelete)
	}
	e.assertUntouched(ns, "guarded")

	start := time.Now()
	hard, _ := e.ladder(LadderConfig{PDBFallbackWait: 500 * time.Millisecond, AllowDelete: true}, nil).Evict(e.ctx, req(p, true, 1))
	if hard.Outcome != OutcomeEvicted || hard.Rung != RungDelete || len(hard.Attempts) != 3 {
		e.t.Errorf("hard: %+v, want evicted via delete after two refusals", hard)
	}
	if waited := time.Since(start); waited < 500*time.Millisecond {
		e.t.Errorf("hard fallback after %s, want at least the 500ms wait", waited)
	}
	e.assertTerminating(p, 1)
}

func testUIDPrecondition(e *env) {
	ns := e.namespace("uid")
	e.node("node-uid")
	old := e.runningPod(ns, "db-0", "node-uid", nil)
	if err := e.client.CoreV1().Pods(ns).Delete(e.ctx, "db-0", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		e.t.Fatal(err)
	}
	if err := wait.PollUntilContextTimeout(e.ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return e.pod(ns, "db-0") == nil, nil
	}); err != nil {
		e.t.Fatal(err)
	}
	cur := e.runningPod(ns, "db-0", "node-uid", nil)
	if cur.UID == old.UID {
		e.t.Fatalf("recreated pod has the old UID %s", cur.UID)
	}
	ev := &Evictor{Client: e.client}
	if o, err := ev.Evict(e.ctx, ref(old), 1); o != OutcomeGone {
		e.t.Errorf("stale eviction: %s (%v), want gone", o, err)
	}
	if o, err := ev.Delete(e.ctx, ref(old), 1); o != OutcomeGone {
		e.t.Errorf("stale delete: %s (%v), want gone", o, err)
	}
	e.assertUntouched(ns, "db-0")
	if got := e.pod(ns, "db-0"); got == nil || got.UID != cur.UID {
		e.t.Errorf("current pod replaced or gone: %+v", got)
	}
}
