package sim

import (
	"container/heap"
	"time"
)

// eventKind orders events that fall on the same instant: the node changes first (pods released),
// then the world is sampled (notifiers, plot), then the kubelet syncs, then the agent, then the node
// status is written.
type eventKind int

const (
	evTick eventKind = iota
	evKubeletSync
	evKubeletPoll
	evKubeletNotify
	evAgentSync
	evAgentWake
	evStatus
)

// event is one scheduled action of the simulation.
type event struct {
	at   time.Time
	kind eventKind
	seq  uint64 // insertion order: the last tie-breaker, so the order is total
}

// queue is the event heap: earliest first, then by kind, then by insertion order.
type queue struct {
	items []event
	seq   uint64
}

func (q *queue) Len() int { return len(q.items) }

func (q *queue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}

func (q *queue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }

// Push and Pop implement heap.Interface; use push and pop.
func (q *queue) Push(x any) { q.items = append(q.items, x.(event)) }

func (q *queue) Pop() any {
	n := len(q.items)
	e := q.items[n-1]
	q.items = q.items[:n-1]
	return e
}

// push schedules an event.
func (q *queue) push(at time.Time, kind eventKind) {
	q.seq++
	heap.Push(q, event{at: at, kind: kind, seq: q.seq})
}

// pop removes and returns the earliest event.
func (q *queue) pop() event { return heap.Pop(q).(event) }

// has reports whether an event of the kind is scheduled at or before at.
func (q *queue) has(kind eventKind, at time.Time) bool {
	for _, e := range q.items {
		if e.kind == kind && !e.at.After(at) {
			return true
		}
	}
	return false
}

// hasAt reports whether an event of the kind is scheduled at exactly at.
func (q *queue) hasAt(kind eventKind, at time.Time) bool {
	for _, e := range q.items {
		if e.kind == kind && e.at.Equal(at) {
			return true
		}
	}
	return false
}
