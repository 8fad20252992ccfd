package janitor_test

// Level-1 tests: the janitor against a real kube-apiserver, etcd, kube-controller-manager and
// kube-scheduler (test/cluster). Evicted pods are made the way the kubelet makes them: bound to a
// Node object, then their status set to Failed/Evicted with a DisruptionTarget condition.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kube-pressure/pressure/internal/evidence"
	"github.com/kube-pressure/pressure/internal/janitor"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/evictaudit"
)

func TestJanitorOnControlPlane(t *testing.T) {
	audit, auditLog, err := evictaudit.WritesArgs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cp := clustertest.ControlPlane(t, withoutWorkloadControllers(), clustertest.WithOptions(func(o *cluster.ControlPlaneOptions) {
		o.ExtraAPIServerArgs = append(o.ExtraAPIServerArgs, audit...)
	}))
	client, err := cp.Client()
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	f := newFixtures(t, client, "fake-node-1")

	t.Run("policy: TTL from the condition, keep-N per owner, selectors, preserve, non-terminal pods", func(t *testing.T) {
		testPolicy(t, cp.RESTConfig(), client, f.on(t))
	})
	t.Run("precondition: a pod whose resourceVersion changed is not deleted", func(t *testing.T) {
		testStaleResourceVersion(t, client, f.on(t))
	})
	t.Run("terminating: a terminal pod marked for deletion is finished with grace 0, one with finalizers is left to them", func(t *testing.T) {
		testTerminating(t, cp.RESTConfig(), client, f.on(t))
	})
	t.Run("dry-run: reports the pod once in a dry-run Event, deletes and annotates nothing, writes no evidence", func(t *testing.T) {
		testDryRun(t, cp.RESTConfig(), client, f.on(t), auditLog)
	})
	t.Run("leader election: only the leader deletes and a cancelled leader hands over", func(t *testing.T) {
		testLeaderElection(t, cp.RESTConfig(), client, f.on(t))
	})
	t.Run("leader killed mid-backlog: the standby finishes, nothing is lost or deleted twice", func(t *testing.T) {
		testLeaderKilledMidBacklog(t, cp.RESTConfig(), client, f.on(t))
	})
}

func testPolicy(t *testing.T, rc restConfig, client kubernetes.Interface, f *fixtures) {
	ctx := context.Background()
	now := time.Now().Truncate(time.Second)
	clk := testingclock.NewFakeClock(now)
	for _, ns := range []string{"pol-a", "pol-excluded", "pol-other"} {
		f.namespace(ns)
	}
	deploy, rs := f.deployment("pol-a", "web")
	const ttl = 10 * time.Minute
	// Owner web: three evicted long ago; keep-1 keeps the newest.
	f.evicted("pol-a", "web-1", now.Add(-3*time.Hour), ownedByRS(rs))
	f.evicted("pol-a", "web-2", now.Add(-2*time.Hour), ownedByRS(rs))
	f.evicted("pol-a", "web-3", now.Add(-1*time.Hour), ownedByRS(rs))
	// Bare pods: TTL from the condition (started an hour before it), not from the start.
	bareOld := f.evicted("pol-a", "bare-old", now.Add(-ttl))
	f.evicted("pol-a", "bare-fresh", now.Add(-time.Minute))
	f.evicted("pol-a", "bare-preserved", now.Add(-time.Hour), annotated(janitor.AnnotationPreserve, "true"))
	f.evicted("pol-a", "bare-unselected", now.Add(-time.Hour), labelled("janitor", "skip"))
	f.evicted("pol-excluded", "bare-excluded", now.Add(-time.Hour))
	f.evicted("pol-other", "bare-not-included", now.Add(-time.Hour))
	f.running("pol-a", "running")
	f.pod("pol-a", "pending")

	cfg := testConfig(ttl, "pol-a", "pol-excluded")
	cfg.ExcludeNamespaces = []string{"pol-excluded"}
	cfg.LabelSelector = "janitor notin (skip)"
	reg := prometheus.NewRegistry()
	startJanitor(t, cfg, janitor.Options{RESTConfig: rc, Clock: clk, Registry: reg, Logger: testLogger(t, "policy"), Identity: "policy"})

	gone := []string{"web-1", "web-2", "bare-old"}
	kept := []string{"web-3", "bare-fresh", "bare-preserved", "bare-unselected", "running", "pending"}
	waitForPods(t, client, "pol-a", gone, kept)
	// The verdicts on the cached pods that stay. Running and pending pods are not even listed, nor
	// are pods outside the label selector or in an excluded namespace (the API server filters them).
	eventually(t, 30*time.Second, "skip and pending gauges", func() error {
		want := map[string]float64{"kept_newest_per_owner": 1, "preserve_annotation": 1, "label_selector": 0, "namespace": 1}
		for reason, n := range want {
			if got := metricValue(t, reg, "pressure_janitor_pods_skipped", "reason", reason); got != n {
				return fmt.Errorf("skipped{reason=%q} = %v; want %v", reason, got, n)
			}
		}
		if got := metricValue(t, reg, "pressure_janitor_pods_pending", "namespace", "pol-a"); got != 1 {
			return fmt.Errorf("pending{namespace=pol-a} = %v; want 1", got)
		}
		return nil
	})
	waitForPods(t, client, "pol-a", gone, kept)
	waitForPods(t, client, "pol-excluded", nil, []string{"bare-excluded"})
	waitForPods(t, client, "pol-other", nil, []string{"bare-not-included"})

	// The fresh pod is deleted when the clock reaches its TTL, with no pod change to trigger a pass.
	clk.Step(ttl - time.Minute - time.Second)
	time.Sleep(time.Second) // a wrongly early timer would fire now
	waitForPods(t, client, "pol-a", nil, []string{"bare-fresh"})
	clk.Step(time.Second)
	waitForPods(t, client, "pol-a", []string{"bare-fresh"}, nil)
	// Evidence: the bare pod's Event at once; the Deployment's (resolved through the ReplicaSet),
	// one Event with count 2, once its window closed (the clock moved past it).
	if _, err := client.CoreV1().Events("pol-a").Get(ctx, evidence.EventName(string(bareOld.UID)), metav1.GetOptions{}); err != nil {
		t.Errorf("evidence event of bare-old: %v", err)
	}
	eventually(t, 30*time.Second, "the Deployment's evidence event", func() error {
		evs, err := client.CoreV1().Events("pol-a").List(ctx, metav1.ListOptions{FieldSelector: fields.Set{
			"involvedObject.kind": "Deployment", "involvedObject.name": deploy.Name, "involvedObject.uid": string(deploy.UID),
		}.String()})
		if err != nil {
			return err
		}
		if len(evs.Items) != 1 {
			return fmt.Errorf("%d events on deployment %s; want 1", len(evs.Items), deploy.Name)
		}
		ev := evs.Items[0]
		var w evidence.Window
		if err := json.Unmarshal([]byte(ev.Annotations[evidence.Annotation]), &w); err != nil {
			return fmt.Errorf("event %s: %s annotation: %w", ev.Name, evidence.Annotation, err)
		}
		var pods []string
		for _, r := range w.Pods {
			pods = append(pods, r.Pod)
		}
		slices.Sort(pods)
		if ev.Reason != evidence.EventReason || ev.Count != 2 || !slices.Equal(pods, []string{"web-1", "web-2"}) ||
			!strings.HasPrefix(ev.Message, "Deleted 2 pods of Deployment/web between ") {
			return fmt.Errorf("event %s: reason %s count %d pods %q message %q", ev.Name, ev.Reason, ev.Count, pods, ev.Message)
		}
		return nil
	})
	if got := metricSum(t, reg, "pressure_janitor_pods_deleted_total"); got != 4 {
		t.Errorf("pressure_janitor_pods_deleted_total = %v; want 4", got)
	}
}

func testStaleResourceVersion(t *testing.T, client kubernetes.Interface, f *fixtures) {
	ctx := context.Background()
	f.namespace("stale")
	p := f.pod("stale", "p")
	selected := janitor.PodRef{Namespace: p.Namespace, Name: p.Name, UID: string(p.UID), ResourceVersion: p.ResourceVersion}
	evicted, err := setStatus(ctx, client, p, v1.PodFailed, time.Now())
	if err != nil {
		t.Fatalf("evict: %v", err)
	}
	deleted, err := janitor.DeletePod(ctx, client, selected, false)
	if !errors.Is(err, janitor.ErrChanged) || deleted {
		t.Fatalf("DeletePod(stale resourceVersion %s) = %v, %v; want false, ErrChanged", selected.ResourceVersion, deleted, err)
	}
	if _, err := client.CoreV1().Pods("stale").Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatalf("pod gone after a refused delete: %v", err)
	}
	wrongUID := janitor.PodRef{Namespace: "stale", Name: "p", UID: "00000000-0000-0000-0000-000000000000", ResourceVersion: evicted.ResourceVersion}
	if deleted, err := janitor.DeletePod(ctx, client, wrongUID, false); !errors.Is(err, janitor.ErrChanged) || deleted {
		t.Errorf("DeletePod(wrong UID) = %v, %v; want false, ErrChanged", deleted, err)
	}
	current := janitor.PodRef{Namespace: "stale", Name: "p", UID: string(evicted.UID), ResourceVersion: evicted.ResourceVersion}
	if deleted, err := janitor.DeletePod(ctx, client, current, true); err != nil || !deleted {
		t.Errorf("DeletePod(current, dry-run) = %v, %v; want true, nil", deleted, err)
	}
	if _, err := client.CoreV1().Pods("stale").Get(ctx, "p", metav1.GetOptions{}); err != nil {
		t.Fatalf("pod gone after a dry-run delete: %v", err)
	}
	if deleted, err := janitor.DeletePod(ctx, client, current, false); err != nil || !deleted {
		t.Errorf("DeletePod(current) = %v, %v; want true, nil", deleted, err)
	}
	if deleted, err := janitor.DeletePod(ctx, client, current, false); err != nil || deleted {
		t.Errorf("DeletePod(already deleted) = %v, %v; want false, nil", deleted, err)
	}
}

// waitForPods waits until every name in gone is absent and every name in kept present.
func waitForPods(t *testing.T, client kubernetes.Interface, ns string, gone, kept []string) {
	t.Helper()
	eventually(t, 30*time.Second, "pods of "+ns, func() error {
		names, err := podNames(context.Background(), client, ns)
		if err != nil {
			return err
		}
		for _, n := range gone {
			if names[n] {
				p, err := client.CoreV1().Pods(ns).Get(context.Background(), n, metav1.GetOptions{})
				if err != nil {
					return fmt.Errorf("pod %s listed, then: %w", n, err)
				}
				return fmt.Errorf("pod %s still exists: phase %s reason %s deletionTimestamp %v owners %v conditions %v",
					n, p.Status.Phase, p.Status.Reason, p.DeletionTimestamp, p.OwnerReferences, p.Status.Conditions)
			}
		}
		for _, n := range kept {
			if !names[n] {
				return fmt.Errorf("pod %s was deleted", n)
			}
		}
		return nil
	})
}

// metricSum sums every series of a metric family in reg.
func metricSum(t *testing.T, reg prometheus.Gatherer, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

// metricValue returns the series of a metric family in reg with label=value (0 if absent).
func metricValue(t *testing.T, reg prometheus.Gatherer, name, label, value string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label && lp.GetValue() == value {
					return m.GetCounter().GetValue() + m.GetGauge().GetValue()
				}
			}
		}
	}
	return 0
}

func testDryRun(t *testing.T, rc restConfig, client kubernetes.Interface, f *fixtures, auditLog string) {
	ctx := context.Background()
	f.namespace("dry")
	old := f.evicted("dry", "old", time.Now().Add(-time.Hour))
	f.evicted("dry", "fresh", time.Now())
	// A pod without an eviction time (no condition, no container status): a live janitor would annotate
	// it with its first-seen time.
	noTime := f.pod("dry", "no-time")
	noTime.Status = v1.PodStatus{Phase: v1.PodFailed, Reason: janitor.ReasonEvicted, Message: evictionMessage}
	if _, err := client.CoreV1().Pods("dry").UpdateStatus(ctx, noTime, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("pod no-time: %v", err)
	}
	cfg := testConfig(time.Minute, "dry")
	cfg.DryRun = true
	reg := prometheus.NewRegistry()
	startJanitor(t, cfg, janitor.Options{RESTConfig: rc, Registry: reg, Logger: testLogger(t, "dry"), Identity: "dry"})
	eventually(t, 30*time.Second, "a dry-run deletion", func() error {
		if got := metricValue(t, reg, "pressure_janitor_pods_deleted_total", "dry_run", "true"); got != 1 {
			return fmt.Errorf("deleted_total{dry_run=true} = %v", got)
		}
		return nil
	})
	// The report: one dry-run Event on the bare pod past its TTL, saying nothing was deleted.
	eventually(t, 30*time.Second, "the dry-run report", func() error {
		ev, err := client.CoreV1().Events("dry").Get(ctx, evidence.DryRunEventName(string(old.UID)), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if ev.Reason != evidence.EventReasonDryRun || ev.InvolvedObject.Name != "old" ||
			!strings.HasPrefix(ev.Message, "Dry-run, nothing deleted: would have deleted pod old ") {
			return fmt.Errorf("event %s: reason %s on %s message %q", ev.Name, ev.Reason, ev.InvolvedObject.Name, ev.Message)
		}
		return nil
	})
	// Poke the janitor with a change; the pod must not be reported twice.
	if _, err := setStatus(ctx, client, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "dry", Name: "fresh"}}, v1.PodFailed, time.Now()); err != nil {
		t.Fatalf("update pod: %v", err)
	}
	time.Sleep(2 * time.Second)
	waitForPods(t, client, "dry", nil, []string{"old", "fresh", "no-time"})
	if got := metricValue(t, reg, "pressure_janitor_pods_deleted_total", "dry_run", "true"); got != 1 {
		t.Errorf("deleted_total{dry_run=true} = %v after another pass; want 1", got)
	}
	evs, err := client.CoreV1().Events("dry").List(ctx, metav1.ListOptions{FieldSelector: "reason=" + evidence.EventReason})
	if err != nil || len(evs.Items) != 0 {
		t.Errorf("dry-run wrote %d evidence events (err %v); want none", len(evs.Items), err)
	}
	if p, err := client.CoreV1().Pods("dry").Get(ctx, "no-time", metav1.GetOptions{}); err != nil || p.Annotations[janitor.AnnotationTerminalSince] != "" {
		t.Errorf("pod no-time: err %v, annotations %v; want no %s", err, p.GetAnnotations(), janitor.AnnotationTerminalSince)
	}
	// The API server's audit log: of the janitor's writes (user agent pressure-janitor) of pods in this
	// namespace and of cluster-scoped nodes and admission objects, none persisted anything (its DELETE
	// is sent with dryRun=All; Events are not logged). The earlier subtests' janitors wrote elsewhere.
	ws, err := evictaudit.ReadWrites(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	var mine []evictaudit.Write
	for _, w := range evictaudit.By(ws, janitor.Component) {
		if w.Namespace == "dry" || w.Namespace == "" {
			mine = append(mine, w)
		}
	}
	for _, w := range mine {
		if !w.DryRun {
			t.Errorf("dry-run janitor wrote %s", w)
		}
	}
	if len(mine) == 0 {
		t.Errorf("the audit log holds no write of the dry-run janitor (%d writes in all); want its dry-run DELETE", len(ws))
	}
	t.Logf("the dry-run janitor's writes in the audit log: %v", mine)
}
