package actuate

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/owner"
	"github.com/kube-pressure/pressure/internal/policy"
)

// Node-side level-1 tests (taint, ledger, dry-run, events, owners); see cluster_test.go.

func (e *env) taints(node string) []v1.Taint {
	e.t.Helper()
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, node, metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	return n.Spec.Taints
}

func findTaint(ts []v1.Taint, key string, effect v1.TaintEffect) *v1.Taint {
	for i := range ts {
		if ts[i].Key == key && ts[i].Effect == effect {
			return &ts[i]
		}
	}
	return nil
}

func testTaint(e *env) {
	theirs := []v1.Taint{
		{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule},
		{Key: "example.com/maintenance", Effect: v1.TaintEffectNoExecute},
	}
	e.node("node-taint", theirs...)
	tn := &loopbreaker.Tainter{Client: e.client, Node: "node-taint"}
	check := func(step string, want *string) {
		ts := e.taints("node-taint")
		for _, o := range theirs {
			if got := findTaint(ts, o.Key, o.Effect); got == nil || got.Value != o.Value {
				e.t.Errorf("%s: their taint %s lost or changed: %v", step, o.Key, ts)
			}
		}
		got := findTaint(ts, loopbreaker.TaintKey, v1.TaintEffectNoSchedule)
		switch {
		case want == nil && got != nil:
			e.t.Errorf("%s: our taint still there: %v", step, ts)
		case want != nil && (got == nil || got.Value != *want):
			e.t.Errorf("%s: our taint %v, want value %s", step, got, *want)
		}
	}
	steps := []struct {
		name   string
		do     func() (bool, error)
		change bool
		want   *string
	}{
		{"add", func() (bool, error) { return tn.Ensure(e.ctx, "memory.available") }, true, ptr.To("memory.available")},
		{"add again", func() (bool, error) { return tn.Ensure(e.ctx, "memory.available") }, false, ptr.To("memory.available")},
		{"refresh", func() (bool, error) { return tn.Ensure(e.ctx, "nodefs.available") }, true, ptr.To("nodefs.available")},
		{"remove", func() (bool, error) { return tn.Remove(e.ctx) }, true, nil},
		{"remove again", func() (bool, error) { return tn.Remove(e.ctx) }, false, nil},
	}
	for _, s := range steps {
		changed, err := s.do()
		if err != nil || changed != s.change {
			e.t.Errorf("%s: changed %v, %v; want %v", s.name, changed, err, s.change)
		}
		check(s.name, s.want)
	}
}

func testLedgerPersistence(e *env) {
	ns := e.namespace("ledger")
	e.node("node-ledger")
	p := e.runningPod(ns, "worker", "node-ledger", nil)
	store := &loopbreaker.NodeAnnotationStore{Client: e.client, Node: "node-ledger"}
	first, err := loopbreaker.LoadLedger(e.ctx, store, policy.LoopConfig{}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	now := time.Now()
	workload := policy.Workload{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "worker", UID: "uid-deploy"}
	if _, _, err := first.Record(e.ctx, policy.HistoryEntry{UID: string(p.UID), Namespace: ns, Name: p.Name, Owner: workload, Signal: "memory.available",
		Rung: string(RungEviction), At: now}); err != nil {
		e.t.Fatal(err)
	}
	// A restarted agent: a new ledger from the node. The policy reads its unsettled eviction as in flight
	// (policy.Input.InFlight), so it does not plan the pod again (policy's TestInFlightRule).
	second, err := loopbreaker.LoadLedger(e.ctx, store, policy.LoopConfig{}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	in, _ := policy.NewInput(policy.Read{Now: now.Add(time.Second), Ledger: policy.LedgerOf(second.Entries())})
	if len(in.InFlight) != 1 || in.InFlight[0].UID != string(p.UID) ||
		!policy.DefaultConfig().InFlight().Holds(in.InFlight[0].At, now.Add(time.Second), policy.PodListed) {
		e.t.Errorf("the reloaded ledger lost the eviction in flight: %+v", second.Entries())
	}
	e.assertUntouched(ns, "worker")
	loop, ok, err := second.Record(e.ctx, policy.HistoryEntry{UID: "replacement", Namespace: ns, Name: "worker-2", Owner: workload,
		Signal: "memory.available", At: now.Add(time.Minute), Created: now.Add(time.Second)})
	if err != nil || !ok {
		e.t.Errorf("evicted replacement not seen as a loop: %v %v", ok, err)
	}
	third, err := loopbreaker.LoadLedger(e.ctx, store, policy.LoopConfig{}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	if got := third.Avoidances(now.Add(2 * time.Minute)); len(got) != 1 || !got[0].Loop || !got[0].Until.Equal(loop.Until) {
		e.t.Errorf("reloaded avoidances %+v, want the escalated one until %s", got, loop.Until)
	}
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, "node-ledger", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if n.Annotations["example.com/keep"] != "me" || !strings.Contains(n.Annotations[loopbreaker.LedgerAnnotation], string(p.UID)) {
		e.t.Errorf("node annotations %v", n.Annotations)
	}
}

func testDryRun(e *env) {
	ns := e.namespace("dryrun")
	e.node("node-dryrun")
	p := e.runningPod(ns, "web", "node-dryrun", nil)
	store := &loopbreaker.NodeAnnotationStore{Client: e.client, Node: "node-dryrun", DryRun: true}
	l, err := loopbreaker.LoadLedger(e.ctx, store, policy.LoopConfig{}, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	killer := &recordingKiller{}
	lad := e.ladder(LadderConfig{DryRun: true, AllowDelete: true, AllowCgroupKill: true}, l)
	lad.Killer = killer
	res, err := lad.Evict(e.ctx, req(p, true, 1))
	if err != nil || res.Outcome != OutcomeDryRun || len(res.Attempts) != 0 || len(killer.killed) != 0 {
		e.t.Errorf("dry-run: %+v %v, killed %v", res, err, killer.killed)
	}
	tn := &loopbreaker.Tainter{Client: e.client, Node: "node-dryrun", DryRun: true}
	if changed, err := tn.Ensure(e.ctx, "memory.available"); err != nil || !changed {
		e.t.Errorf("dry-run taint: changed %v, %v; want it to report the change it would make", changed, err)
	}
	if _, _, err := l.Record(e.ctx, policy.HistoryEntry{UID: string(p.UID), Namespace: ns, Name: "web", At: time.Now()}); err != nil {
		e.t.Fatal(err)
	}
	e.assertUntouched(ns, "web")
	n, err := e.client.CoreV1().Nodes().Get(e.ctx, "node-dryrun", metav1.GetOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	if findTaint(n.Spec.Taints, loopbreaker.TaintKey, v1.TaintEffectNoSchedule) != nil {
		e.t.Errorf("dry-run tainted the node: %v", n.Spec.Taints)
	}
	if _, ok := n.Annotations[loopbreaker.LedgerAnnotation]; ok {
		e.t.Errorf("dry-run wrote the ledger annotation")
	}
	ev := e.waitEvent(ns, p.UID, ReasonPressureEvictionDryRun)
	if !strings.HasPrefix(ev.Message, "Would evict (dry-run): signal memory.available") {
		e.t.Errorf("dry-run event message %q", ev.Message)
	}
}

func testNodeAndOwnerEvents(e *env) {
	ns := e.namespace("owner-events")
	e.node("node-events")
	e.events.PressureStarted("memory.available", "300Mi", "356Mi")
	e.events.PressureEnded("memory.available", "1Gi")
	e.events.TaintChanged(true, "memory.available")
	started := e.waitEvent(metav1.NamespaceDefault, "node-events", ReasonNodePressureStarted)
	if started.Type != v1.EventTypeWarning || started.Message != "Node pressure started: memory.available observed 300Mi, threshold 356Mi" {
		e.t.Errorf("started event %s %q", started.Type, started.Message)
	}
	e.waitEvent(metav1.NamespaceDefault, "node-events", ReasonNodePressureEnded)
	e.waitEvent(metav1.NamespaceDefault, "node-events", ReasonLoopTaintAdded)

	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "pause"}}}}}}
	d, err := e.client.AppsV1().Deployments(ns).Create(e.ctx, d, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	workload := policy.Workload{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web", UID: string(d.UID)}
	e.events.EvictionLoop(policy.EvictionLoop{Owner: workload, Pod: policy.PodRef{UID: "x", Namespace: ns, Name: "web-abc"}, Evictions: 2,
		Since: 42 * time.Second, Signal: "memory.available", Until: time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)})
	loop := e.waitEvent(ns, d.UID, ReasonEvictionLoop)
	want := "Pod web-abc evicted from node node-events for memory.available 42s after the previous eviction of this Deployment (2 evictions within the window); its new pods avoid node node-events until 2026-11-29T16:00:00Z"
	if loop.Type != v1.EventTypeWarning || loop.Message != want || loop.InvolvedObject.Kind != "Deployment" {
		e.t.Errorf("loop event %s %s %q, want Warning on the Deployment %q", loop.Type, loop.InvolvedObject.Kind, loop.Message, want)
	}
}

func testOwnerResolver(e *env) {
	ns := e.namespace("owners")
	labels := map[string]string{"app": "api"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "api"},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: v1.PodSpec{AutomountServiceAccountToken: ptr.To(false), Containers: []v1.Container{{Name: "app", Image: "pause"}}}}}}
	d, err := e.client.AppsV1().Deployments(ns).Create(e.ctx, d, metav1.CreateOptions{})
	if err != nil {
		e.t.Fatal(err)
	}
	var pod v1.Pod
	err = wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		list, err := e.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=api"})
		if err != nil || len(list.Items) == 0 {
			return false, err
		}
		pod = list.Items[0]
		return true, nil
	})
	if err != nil {
		e.t.Fatalf("the ReplicaSet controller made no pod: %v", err)
	}
	got, err := (&owner.Resolver{Client: e.client}).Resolve(e.ctx, owner.ControllerOf(&pod))
	if err != nil {
		e.t.Fatal(err)
	}
	want := policy.Workload{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "api", UID: string(d.UID)}
	if got != want {
		e.t.Errorf("owner %+v, want %+v", got, want)
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// testTaintConflict makes another writer add a taint between the Tainter's read and its patch: the
// patch is refused with a conflict, retried from a fresh read, and both taints end up on the node.
func testTaintConflict(e *env) {
	e.node("node-conflict", v1.Taint{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule})
	cfg := rest.CopyConfig(e.config)
	var patches atomic.Int32
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(r *http.Request) (*http.Response, error) {
			if r.Method == http.MethodPatch && patches.Add(1) == 1 {
				// The node lifecycle controller writes this node too (its not-ready taint), so the
				// concurrent writer itself retries on conflict.
				err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
					n, err := e.client.CoreV1().Nodes().Get(e.ctx, "node-conflict", metav1.GetOptions{})
					if err != nil {
						return err
					}
					n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "concurrent", Value: "x", Effect: v1.TaintEffectNoSchedule})
					_, err = e.client.CoreV1().Nodes().Update(e.ctx, n, metav1.UpdateOptions{})
					return err
				})
				if err != nil {
					e.t.Errorf("concurrent writer: %v", err)
				}
			}
			return rt.RoundTrip(r)
		})
	}
	racing, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	changed, err := (&loopbreaker.Tainter{Client: racing, Node: "node-conflict"}).Ensure(e.ctx, "memory.available")
	if err != nil || !changed {
		e.t.Fatalf("Ensure: changed %v, %v", changed, err)
	}
	if n := patches.Load(); n < 2 {
		e.t.Errorf("%d patches, want a retry after the conflict", n)
	}
	ts := e.taints("node-conflict")
	for _, k := range []string{"dedicated", "concurrent", loopbreaker.TaintKey} {
		if findTaint(ts, k, v1.TaintEffectNoSchedule) == nil {
			e.t.Errorf("taint %s missing: %v", k, ts)
		}
	}
}
