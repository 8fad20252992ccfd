package janitor_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/janitor"
)

const holdFinalizer = "pressure.kube-pressure.io/test-hold"

// testTerminating: a terminal pod already marked for deletion. Without finalizers nobody else
// removes it once its kubelet is gone (here there is none): the janitor finishes it with grace 0.
// With finalizers it is left to their owner.
func testTerminating(t *testing.T, rc restConfig, client kubernetes.Interface, f *fixtures) {
	ctx := context.Background()
	const ns = "term"
	f.namespace(ns)
	evictedAt := time.Now().Add(-time.Hour)
	// Deleted gracefully while it ran (grace 300 s), then evicted: Failed, deletionTimestamp set.
	graceful := f.running(ns, "graceful")
	if err := client.CoreV1().Pods(ns).Delete(ctx, graceful.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](300)}); err != nil {
		t.Fatalf("delete %s with grace 300: %v", graceful.Name, err)
	}
	graceful, err := setStatus(ctx, client, graceful, v1.PodFailed, evictedAt)
	if err != nil {
		t.Fatalf("evict %s: %v", graceful.Name, err)
	}
	// Evicted, then deleted while a finalizer holds it.
	held := f.evicted(ns, "held", evictedAt, func(p *v1.Pod) { p.Finalizers = []string{holdFinalizer} })
	if err := client.CoreV1().Pods(ns).Delete(ctx, held.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete %s: %v", held.Name, err)
	}
	t.Cleanup(func() { releaseHold(t, client, ns, held.Name) })
	for _, name := range []string{graceful.Name, held.Name} {
		p, err := client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil || p.DeletionTimestamp == nil || p.Status.Phase != v1.PodFailed {
			t.Fatalf("fixture %s: want Failed with a deletionTimestamp; got %v, err %v", name, p, err)
		}
	}

	reg := prometheus.NewRegistry()
	startJanitor(t, testConfig(0, ns), janitor.Options{RESTConfig: rc, Registry: reg, Logger: testLogger(t, "terminating"), Identity: "terminating"})
	waitForPods(t, client, ns, []string{"graceful"}, []string{"held"})
	eventually(t, 30*time.Second, "one deletion counted, the held pod counted as terminating", func() error {
		if got := metricSum(t, reg, "pressure_janitor_pods_deleted_total"); got != 1 {
			return fmt.Errorf("pressure_janitor_pods_deleted_total = %v; want 1", got)
		}
		if got := metricValue(t, reg, "pressure_janitor_pods_skipped", "reason", string(janitor.SkipTerminating)); got != 1 {
			return fmt.Errorf("skipped{reason=terminating} = %v; want 1", got)
		}
		return nil
	})
	// The DELETE's first write (deletionTimestamp) brings a version the janitor would delete
	// again; it must not send a second DELETE (answered 404).
	time.Sleep(time.Second)
	if got := metricSum(t, reg, "pressure_janitor_delete_not_applied_total"); got != 0 {
		t.Errorf("pressure_janitor_delete_not_applied_total = %v; want 0", got)
	}
	waitForPods(t, client, ns, nil, []string{"held"})
}

// releaseHold removes the test finalizer; the API server then removes the pod.
func releaseHold(t *testing.T, client kubernetes.Interface, ns, name string) {
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	_, err := client.CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Errorf("release %s/%s: %v", ns, name, err)
	}
}
