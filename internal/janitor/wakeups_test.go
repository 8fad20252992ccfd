package janitor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	testingclock "k8s.io/utils/clock/testing"
)

// recorder collects what wakeups hands on.
type recorder struct {
	mu    sync.Mutex
	items []string
}

func (r *recorder) add(item string) { r.mu.Lock(); r.items = append(r.items, item); r.mu.Unlock() }

func (r *recorder) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.items...)
}

// waitFor polls until the recorder holds want or 30 s passed: a bound against a hang, not a speed check
// (the fake clock decides when items are due; a loaded host may delay the goroutine by seconds).
func (r *recorder) waitFor(t *testing.T, want []string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) && !cmp.Equal(r.got(), want) {
		time.Sleep(5 * time.Millisecond)
	}
	if diff := cmp.Diff(r.got(), want); diff != "" {
		t.Errorf("items handed on (-got +want):\n%s", diff)
	}
}

func TestWakeupsBringItemsBackAtTheirTimeInOrder(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	rec := &recorder{}
	w := newWakeups(clk, rec.add)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	w.at("a/late", t0.Add(10*time.Minute))
	w.at("a/b", t0.Add(time.Minute))
	w.at("a/a", t0.Add(time.Minute)) // same time: by item
	w.at("a/past", t0.Add(-time.Second))
	rec.waitFor(t, []string{"a/past"})
	clk.Step(time.Minute - time.Nanosecond)
	time.Sleep(20 * time.Millisecond)
	rec.waitFor(t, []string{"a/past"})
	clk.Step(time.Nanosecond)
	rec.waitFor(t, []string{"a/past", "a/a", "a/b"})
	w.at("a/early", t0.Add(2*time.Minute)) // earlier than the armed timer: re-armed
	clk.Step(time.Minute)
	rec.waitFor(t, []string{"a/past", "a/a", "a/b", "a/early"})
	clk.Step(10 * time.Minute)
	rec.waitFor(t, []string{"a/past", "a/a", "a/b", "a/early", "a/late"})
}

func TestWakeupsGiveBackTheHeapOfADrainedBacklog(t *testing.T) {
	w := newWakeups(testingclock.NewFakeClock(t0), func(string) {})
	for i := range 10_000 {
		w.at("a/p", t0.Add(time.Duration(i)))
	}
	w.at("a/last", t0.Add(time.Hour))
	if _, ok := w.popDue(t0.Add(time.Minute)); !ok || len(w.due) != 1 || cap(w.due) > 1024 {
		t.Errorf("after draining 10,000 of 10,001: len %d cap %d; want 1 and a capacity of at most 1024", len(w.due), cap(w.due))
	}
}
