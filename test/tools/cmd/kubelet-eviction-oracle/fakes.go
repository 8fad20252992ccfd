package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// world is what the fakes around the eviction manager read and record. The manager calls them from
// its own goroutine; the driver reads and resets them between steps under mu.
type world struct {
	mu sync.Mutex

	summary      *statsapi.Summary
	afterReclaim *statsapi.Summary
	summaryErr   bool
	summaryCalls int

	dedicatedImageFs, splitContainerFs bool

	evictions   []Eviction
	nodeEvents  []Event
	pendingPod  map[string]*Event // pod event recorded before the kill, by UID
	containerGC int
	imageGC     int
}

func (w *world) resetStep(s *Step) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.summary, w.afterReclaim, w.summaryErr = s.Summary, s.AfterReclaim, s.SummaryError
	w.summaryCalls = 0
	w.evictions, w.nodeEvents = nil, nil
	w.pendingPod = map[string]*Event{}
	w.containerGC, w.imageGC = 0, 0
}

func (w *world) killCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.evictions)
}

// summaryProvider returns the step's Summary on the first call of a step and AfterReclaim (or the
// Summary again) on later calls, which only node-level reclaim makes.
type summaryProvider struct{ w *world }

func (p summaryProvider) Get(_ context.Context, _ bool) (*statsapi.Summary, error) {
	p.w.mu.Lock()
	defer p.w.mu.Unlock()
	p.w.summaryCalls++
	if p.w.summaryErr {
		return nil, errors.New("oracle: summary unavailable")
	}
	s := p.w.summary
	if p.w.summaryCalls > 1 && p.w.afterReclaim != nil {
		s = p.w.afterReclaim
	}
	if s == nil {
		return nil, errors.New("oracle: step has no summary")
	}
	return copySummary(s)
}

// copySummary returns a deep copy (the Summary type has no DeepCopy), so the manager never shares
// memory with the recorded case.
func copySummary(s *statsapi.Summary) (*statsapi.Summary, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("oracle: copy summary: %w", err)
	}
	out := &statsapi.Summary{}
	if err := json.Unmarshal(data, out); err != nil {
		return nil, fmt.Errorf("oracle: copy summary: %w", err)
	}
	return out, nil
}

func (p summaryProvider) GetCPUAndMemoryStats(ctx context.Context) (*statsapi.Summary, error) {
	return p.Get(ctx, false)
}

type diskInfo struct{ w *world }

func (d diskInfo) HasDedicatedImageFs(context.Context) (bool, error) {
	return d.w.dedicatedImageFs, nil
}

func (d diskInfo) HasDedicatedContainerFs(context.Context) (bool, error) {
	return d.w.splitContainerFs, nil
}

// gc counts calls and frees nothing.
type gc struct{ w *world }

func (g gc) DeleteUnusedImages(context.Context) error {
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	g.w.imageGC++
	return nil
}

func (g gc) DeleteAllUnusedContainers(context.Context) error {
	g.w.mu.Lock()
	defer g.w.mu.Unlock()
	g.w.containerGC++
	return nil
}

// kill is the KillPodFunc: it applies the status function to a copy of the pod's status and records
// the result together with the pod event recorded just before.
func (w *world) kill(pod *v1.Pod, isEvicted bool, grace *int64, fn func(*v1.PodStatus)) error {
	status := pod.Status.DeepCopy()
	if fn != nil {
		fn(status)
	}
	e := Eviction{UID: string(pod.UID), Namespace: pod.Namespace, Name: pod.Name, IsEvicted: isEvicted,
		Phase: string(status.Phase), Reason: status.Reason, Message: status.Message}
	if grace != nil {
		g := *grace
		e.GracePeriodOverride = &g
	}
	for _, c := range status.Conditions {
		if c.Type == v1.DisruptionTarget {
			e.Condition = &Condition{Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	e.Event = w.pendingPod[string(pod.UID)]
	delete(w.pendingPod, string(pod.UID))
	w.evictions = append(w.evictions, e)
	return nil
}

// recorder is a record.EventRecorder keeping every event.
type recorder struct{ w *world }

func (r recorder) Event(obj runtime.Object, eventtype, reason, message string) {
	r.record(obj, nil, eventtype, reason, message)
}

func (r recorder) Eventf(obj runtime.Object, eventtype, reason, messageFmt string, args ...interface{}) {
	r.record(obj, nil, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r recorder) AnnotatedEventf(obj runtime.Object, annotations map[string]string, eventtype, reason,
	messageFmt string, args ...interface{}) {
	r.record(obj, annotations, eventtype, reason, fmt.Sprintf(messageFmt, args...))
}

func (r recorder) record(obj runtime.Object, annotations map[string]string, eventtype, reason, message string) {
	ev := Event{Type: eventtype, Reason: reason, Message: message}
	if len(annotations) > 0 {
		ev.Annotations = map[string]string{}
		for k, v := range annotations {
			ev.Annotations[k] = v
		}
	}
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	switch o := obj.(type) {
	case *v1.Pod:
		ev.Kind, ev.Namespace, ev.Name = "Pod", o.Namespace, o.Name
		r.w.pendingPod[string(o.UID)] = &ev
	case *v1.ObjectReference:
		ev.Kind, ev.Namespace, ev.Name = o.Kind, o.Namespace, o.Name
		r.w.nodeEvents = append(r.w.nodeEvents, ev)
	default:
		if m, err := meta.Accessor(obj); err == nil {
			ev.Namespace, ev.Name = m.GetNamespace(), m.GetName()
		}
		ev.Kind = fmt.Sprintf("%T", obj)
		r.w.nodeEvents = append(r.w.nodeEvents, ev)
	}
}
