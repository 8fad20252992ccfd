package janitor

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"k8s.io/utils/clock"
)

// wakeups brings decision items back to the work queue at a time (the next TTL expiry of a pod or
// an owner's pods). It does what the work queue's AddAfter does without AddAfter's bookkeeping for
// each waiting item (an allocation, a map entry and a heap slot: about 100 bytes an item, 10 MiB
// at 100,000 waiting pods): a min-heap of 24-byte entries and one timer on the injected clock. An
// item added twice comes back twice; the work queue merges the copies still waiting to be
// processed, and a decision is idempotent.
type wakeups struct {
	clock clock.WithTicker
	add   func(item string)
	mu    sync.Mutex
	due   wakeHeap
	kick  chan struct{} // a new earliest entry: re-arm the timer
}

type wakeup struct {
	at   int64 // Unix nanoseconds
	item string
}

func newWakeups(clk clock.WithTicker, add func(string)) *wakeups {
	return &wakeups{clock: clk, add: add, kick: make(chan struct{}, 1)}
}

// at brings item back at t (at once if t has passed, on the next turn of run).
func (w *wakeups) at(item string, t time.Time) {
	e := wakeup{at: t.UnixNano(), item: item}
	w.mu.Lock()
	heap.Push(&w.due, e)
	first := w.due[0] == e
	w.mu.Unlock()
	if first {
		select {
		case w.kick <- struct{}{}:
		default:
		}
	}
}

// run hands due items to add until ctx is done.
func (w *wakeups) run(ctx context.Context) {
	for {
		now := w.clock.Now()
		next, ok := w.popDue(now)
		var fire <-chan time.Time
		var timer clock.Timer
		if ok {
			timer = w.clock.NewTimer(next.Sub(now))
			fire = timer.C()
		}
		select {
		case <-ctx.Done():
		case <-w.kick:
		case <-fire:
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// popDue hands the items due at now to add and returns the time of the next one.
func (w *wakeups) popDue(now time.Time) (next time.Time, ok bool) {
	var items []string
	w.mu.Lock()
	for len(w.due) > 0 && w.due[0].at <= now.UnixNano() {
		items = append(items, heap.Pop(&w.due).(wakeup).item)
	}
	if len(w.due) > 0 {
		next, ok = time.Unix(0, w.due[0].at), true
	}
	if c := cap(w.due); c > 1024 && len(w.due) < c/4 { // give back the memory of a drained backlog
		w.due = append(make(wakeHeap, 0, 2*len(w.due)), w.due...)
	}
	w.mu.Unlock()
	for _, item := range items {
		w.add(item)
	}
	return next, ok
}

// wakeHeap orders by time, then item: a total order.
type wakeHeap []wakeup

func (h wakeHeap) Len() int { return len(h) }
func (h wakeHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].item < h[j].item
}
func (h wakeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *wakeHeap) Push(x any)   { *h = append(*h, x.(wakeup)) }
func (h *wakeHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
