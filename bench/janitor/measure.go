package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// deleteWatch records when each pod deletion is seen, and how many pods exist.
type deleteWatch struct {
	mu      sync.Mutex
	deleted map[string]time.Time
	store   cache.Store
}

func startDeleteWatch(ctx context.Context, c kubernetes.Interface) (*deleteWatch, error) {
	d := &deleteWatch{deleted: map[string]time.Time{}}
	f := informers.NewSharedInformerFactory(c, 0)
	inf := f.Core().V1().Pods().Informer()
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if p, ok := obj.(*v1.Pod); ok {
			d.mu.Lock()
			d.deleted[p.Namespace+"/"+p.Name] = time.Now()
			d.mu.Unlock()
		}
	}})
	if err != nil {
		return nil, err
	}
	d.store = inf.GetStore()
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return nil, ctx.Err()
	}
	return d, nil
}

// waitRemaining waits until at most keep pods exist and every evicted pod is accounted for.
func (d *deleteWatch) waitRemaining(ctx context.Context, w *workload, keep int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		w.mu.Lock()
		created := len(w.evicts)
		w.mu.Unlock()
		d.mu.Lock()
		gone := len(d.deleted)
		d.mu.Unlock()
		if n := len(d.store.List()); n <= keep && gone+n >= created {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s: %d pods remain (want <= %d)", timeout, len(d.store.List()), keep)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// span returns the first and last deletion seen after since.
func (d *deleteWatch) span(since time.Time) (first, last time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range d.deleted {
		if t.Before(since) {
			continue
		}
		if first.IsZero() || t.Before(first) {
			first = t
		}
		if t.After(last) {
			last = t
		}
	}
	return first, last
}

type streamResult struct {
	pods, deleted, remaining int
	evictFor, cleanAll       time.Duration
	rate                     float64
	p50, p90, p99, max       time.Duration
}

// streamPhase evicts o.pods pods while the cleaner runs and measures eviction → deletion.
func streamPhase(ctx context.Context, w *workload, d *deleteWatch, o options, prefix string, keep int) (streamResult, error) {
	w.mu.Lock()
	w.evicts = map[string]time.Time{}
	w.mu.Unlock()
	start := time.Now()
	evictFor, err := w.evictAll(ctx, prefix)
	if err != nil {
		return streamResult{}, err
	}
	werr := d.waitRemaining(ctx, w, keep, o.timeout)
	r := streamResult{pods: o.pods, evictFor: evictFor, cleanAll: time.Since(start), remaining: len(d.store.List())}
	var lat []time.Duration
	w.mu.Lock()
	d.mu.Lock()
	for key, ev := range w.evicts {
		if del, ok := d.deleted[key]; ok {
			lat = append(lat, del.Sub(ev))
		}
	}
	d.mu.Unlock()
	w.mu.Unlock()
	first, last := d.span(start)
	r.deleted = len(lat)
	if r.deleted > 1 {
		r.rate = float64(r.deleted-1) / last.Sub(first).Seconds()
	}
	slices.Sort(lat)
	if len(lat) > 0 {
		r.p50, r.p90, r.p99, r.max = lat[len(lat)*50/100], lat[len(lat)*90/100], lat[min(len(lat)-1, len(lat)*99/100)], lat[len(lat)-1]
	}
	return r, werr
}

func (r streamResult) print(name string) {
	fmt.Printf("%s: evicted %d pods in %s; %d deleted, %d left; clean-all %s from the first eviction; %.0f deletions/s; "+
		"eviction→deletion p50 %s p90 %s p99 %s max %s\n", name, r.pods, r.evictFor.Round(time.Millisecond), r.deleted, r.remaining,
		r.cleanAll.Round(time.Millisecond), r.rate, r.p50.Round(time.Millisecond), r.p90.Round(time.Millisecond), r.p99.Round(time.Millisecond), r.max.Round(time.Millisecond))
}
