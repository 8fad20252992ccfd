package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
)

const node = "bench-node"

type workload struct {
	client kubernetes.Interface
	o      options
	rs     []*appsv1.ReplicaSet
	mu     sync.Mutex
	evicts map[string]time.Time // namespace/name → eviction acknowledged
}

func newWorkload(ctx context.Context, c kubernetes.Interface, o options) (*workload, error) {
	w := &workload{client: c, o: o, evicts: map[string]time.Time{}}
	if _, err := c.CoreV1().Nodes().Create(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{}); err != nil {
		return nil, err
	}
	for i := range o.namespaces {
		ns := &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("bench-%03d", i)}}
		if _, err := c.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	err := parallel(o.clients, o.replicasets, func(i int) error {
		labels := map[string]string{"app": fmt.Sprintf("app-%04d", i)}
		rs, err := c.AppsV1().ReplicaSets(fmt.Sprintf("bench-%03d", i%o.namespaces)).Create(ctx, &appsv1.ReplicaSet{
			ObjectMeta: metav1.ObjectMeta{Name: labels["app"], Labels: labels},
			Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels},
				Template: v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec()}},
		}, metav1.CreateOptions{})
		if err == nil {
			w.mu.Lock()
			w.rs = append(w.rs, rs)
			w.mu.Unlock()
		}
		return err
	})
	return w, err
}

func spec() v1.PodSpec {
	return v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "app", Image: "pause:bench"}}}
}

// evictAll creates o.pods pods owned round-robin by the ReplicaSets and evicts each right away.
func (w *workload) evictAll(ctx context.Context, prefix string) (time.Duration, error) {
	start := time.Now()
	err := parallel(w.o.clients, w.o.pods, func(i int) error {
		rs := w.rs[i%len(w.rs)]
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: rs.Namespace, Name: fmt.Sprintf("%s-%s-%05d", rs.Name, prefix, i),
				Labels: rs.Spec.Selector.MatchLabels, OwnerReferences: []metav1.OwnerReference{{
					APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
			Spec: spec(),
		}
		p, err := w.client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{})
		if err != nil {
			return err
		}
		now := metav1.Now()
		p.Status = v1.PodStatus{Phase: v1.PodFailed, Reason: "Evicted",
			Message: "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. ",
			Conditions: []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
				Reason: "TerminationByKubelet", LastTransitionTime: now}}}
		if _, err := w.client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{}); err != nil {
			return err
		}
		w.mu.Lock()
		w.evicts[p.Namespace+"/"+p.Name] = time.Now()
		w.mu.Unlock()
		return nil
	})
	return time.Since(start), err
}

// parallel runs fn(0..n-1) on k goroutines and returns the first error.
func parallel(k, n int, fn func(int) error) error {
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	next := make(chan int)
	for range k {
		wg.Go(func() {
			for i := range next {
				if err := fn(i); err != nil {
					once.Do(func() { first = err })
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return first
}
