package actuate

import (
	"context"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// guardedPod creates a running pod under a PodDisruptionBudget (minAvailable 1, so it allows no
// disruption) and waits until the disruption controller has computed the budget's status.
func (e *env) guardedPod(ns, name, node string) *v1.Pod {
	e.t.Helper()
	labels := map[string]string{"app": name}
	p := e.runningPod(ns, name, node, labels)
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)),
			Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := e.client.PolicyV1().PodDisruptionBudgets(ns).Create(e.ctx, pdb, metav1.CreateOptions{}); err != nil {
		e.t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(e.ctx, 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		got, err := e.client.PolicyV1().PodDisruptionBudgets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s := got.Status
		return s.ObservedGeneration >= got.Generation && s.CurrentHealthy == 1 && s.DesiredHealthy == 1, nil
	})
	if err != nil {
		e.t.Fatalf("the disruption controller never computed the status of PDB %s/%s: %v", ns, name, err)
	}
	return p
}

// evictedByKubelet sets p's status as the kubelet's eviction manager leaves it: phase Failed, reason
// Evicted.
func (e *env) evictedByKubelet(p *v1.Pod) {
	e.t.Helper()
	cur := e.pod(p.Namespace, p.Name)
	cur.Status.Phase, cur.Status.Reason = v1.PodFailed, "Evicted"
	cur.Status.Message = "The node was low on resource: memory."
	if _, err := e.client.CoreV1().Pods(p.Namespace).UpdateStatus(e.ctx, cur, metav1.UpdateOptions{}); err != nil {
		e.t.Fatalf("mark pod %s/%s evicted: %v", p.Namespace, p.Name, err)
	}
}

// testPDBFallbackPodEvictedMeanwhile: a hard eviction refused by a PDB waits; meanwhile the kubelet
// evicts the pod. The Eviction API ignores PDBs for a terminal pod, so a second request would delete
// the kubelet's Evicted shell (the premise is checked on a second pod); the ladder reads the pod again
// after its wait and asks nothing more.
func testPDBFallbackPodEvictedMeanwhile(e *env) {
	ns := e.namespace("pdb-shell")
	e.node("node-pdb-shell")
	premise := e.guardedPod(ns, "premise", "node-pdb-shell")
	e.evictedByKubelet(premise)
	if _, err := (&Evictor{Client: e.client}).Evict(e.ctx, ref(premise), 1); err != nil {
		e.t.Fatalf("premise: the Eviction API refused a terminal pod under a PDB that allows nothing: %v", err)
	}

	p := e.guardedPod(ns, "guarded", "node-pdb-shell")
	done := make(chan Result, 1)
	go func() {
		res, _ := e.ladder(LadderConfig{PDBFallbackWait: 2 * time.Second, AllowDelete: true}, nil).Evict(e.ctx, req(p, true, 1))
		done <- res
	}()
	time.Sleep(500 * time.Millisecond) // within the fallback wait, after the first (refused) request
	e.evictedByKubelet(p)
	res := <-done
	if res.Outcome != OutcomeGone || res.Rung != RungRecheck || len(res.Attempts) != 2 || res.Attempts[0].Outcome != OutcomeBlockedByPDB {
		e.t.Errorf("ladder result %+v, want blocked-by-pdb then recheck:gone", res)
	}
	got := e.pod(ns, "guarded")
	if got == nil || got.UID != p.UID || got.DeletionTimestamp != nil || got.Status.Reason != "Evicted" {
		e.t.Errorf("the kubelet's Evicted shell %s/guarded is %+v, want it kept (not deleted)", ns, got)
	}
}
