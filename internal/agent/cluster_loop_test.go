package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// ownedPod is world.pod for a pod whose controller is owner.
func (w *world) ownedPod(name string, owner metav1.OwnerReference, usage int64) *corev1.Pod {
	p := pod(name, "", "besteffort", "")
	p.Namespace, p.UID, p.Spec.NodeName = w.ns, "", w.node
	p.Finalizers = []string{"pressure.test/hold"}
	p.OwnerReferences = []metav1.OwnerReference{owner}
	p.Spec.Containers[0].Image = "pressure.local/pause:v1"
	p.Status = corev1.PodStatus{}
	got, err := w.client.CoreV1().Pods(w.ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.tree.setPod(string(got.UID), "besteffort", usage)
	return got
}

// TestAgentEscalatesAReplacementEvictedAgainAsALoop (level 1, the whole agent on a fixture node): a
// workload's pod is evicted; its replacement, created after the eviction, fills the node again and is
// evicted again. That is a loop (issue 12): counted in pressure_agent_eviction_loops_total, a Warning
// EvictionLoopDetected Event on the owner, and the owner's avoidance in the ledger escalated to the loop
// cooldown. The first eviction alone is none of these.
func TestAgentEscalatesAReplacementEvictedAgainAsALoop(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	client, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	w := newWorld(t, client, "node-loop")
	// The owner is any object the garbage collector finds; no controller acts on a ConfigMap, so the test
	// creates the "replacement" itself, as the workload's controller would.
	cm, err := client.CoreV1().ConfigMaps(w.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "workload"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owner := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID, Controller: ptr.To(true)}
	r := w.start(w.config(false), cp.RESTConfig())
	w.waitReady(r)
	loops := func() float64 { return counter(r.reg, "pressure_agent_eviction_loops_total") }

	// 2048Mi pods limit, 1950Mi used: 98Mi available, below the agent's 356Mi.
	first := w.ownedPod("app-1", owner, 1950*mi)
	eventually(t, 20*time.Second, "first pod evicted", func() error { return w.onlyTerminating("app-1") })
	if got := loops(); got != 0 {
		t.Errorf("loops after the first eviction: %v, want 0", got)
	}
	// The kubelet would finish the pod: no finalizer, no cgroup, and its deletion confirmed.
	w.release("app-1", string(first.UID))
	if err := client.CoreV1().Pods(w.ns).Delete(ctx, "app-1", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "first pod gone", func() error {
		if _, ok := w.terminating()["app-1"]; ok {
			return fmt.Errorf("app-1 still listed")
		}
		return nil
	})
	second := w.ownedPod("app-2", owner, 1950*mi)
	evictedAgain := time.Now()
	eventually(t, 20*time.Second, "replacement evicted", func() error { return w.onlyTerminating("app-2") })
	eventually(t, 10*time.Second, "loop counted", func() error {
		if got := loops(); got != 1 {
			return fmt.Errorf("pressure_agent_eviction_loops_total %v, want 1", got)
		}
		return nil
	})
	eventually(t, 10*time.Second, "EvictionLoopDetected on the owner", func() error {
		for _, e := range w.events(actuate.ReasonEvictionLoop) {
			if e.InvolvedObject.Kind == "ConfigMap" && e.InvolvedObject.UID == cm.UID && e.Type == corev1.EventTypeWarning &&
				strings.Contains(e.Message, "Pod app-2 evicted from node node-loop") && strings.Contains(e.Message, "2 evictions within the window") {
				return nil
			}
		}
		return fmt.Errorf("events %+v", w.events(actuate.ReasonEvictionLoop))
	})
	n, err := client.CoreV1().Nodes().Get(ctx, w.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := loopbreaker.ReadLedger(strings.NewReader(n.Annotations[loopbreaker.LedgerAnnotation]), policy.LoopConfig{})
	if err != nil {
		t.Fatal(err)
	}
	as := l.Avoidances(time.Now())
	atLeast := evictedAgain.Add(policy.DefaultLoopAvoidance - time.Minute)
	if len(as) != 1 || as[0].Owner.UID != string(cm.UID) || !as[0].Loop || as[0].Until.Before(atLeast) {
		t.Errorf("ledger avoidances %+v, want the owner's, escalated (loop) until about %s", as, evictedAgain.Add(policy.DefaultLoopAvoidance))
	}
	w.release("app-2", string(second.UID))
}
