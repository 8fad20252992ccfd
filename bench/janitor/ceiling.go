package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// plainDelete is the API server's ceiling on this machine: it lists the Failed pods and deletes
// them with k workers, no rate limit, with the janitor's UID and resourceVersion preconditions.
// It returns deletions per second from the first to the last deletion the watch saw.
func plainDelete(ctx context.Context, c kubernetes.Interface, k int, d *deleteWatch, w *workload) (float64, error) {
	list, err := c.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "status.phase=Failed"})
	if err != nil {
		return 0, err
	}
	began := time.Now()
	var failed atomic.Int64
	err = parallel(k, len(list.Items), func(i int) error {
		p := &list.Items[i]
		uid, rv := p.UID, p.ResourceVersion
		err := c.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{
			Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
		if err != nil {
			failed.Add(1)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if err := d.waitRemaining(ctx, w, 0, w.o.timeout); err != nil {
		return 0, err
	}
	if n := failed.Load(); n > 0 {
		return 0, fmt.Errorf("plain delete: %d of %d deletes failed", n, len(list.Items))
	}
	first, last := d.span(began)
	return float64(len(list.Items)-1) / last.Sub(first).Seconds(), nil
}
