package actuate

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLadderHandsThePDBFallbackToTheBackground: with later set, a hard eviction refused by a PDB returns
// at once (the refusal, Continuing) without waiting for the fallback; the wait, the read of the pod,
// the second request and the DELETE happen in the background, and later gets the final result.
func TestLadderHandsThePDBFallbackToTheBackground(t *testing.T) {
	r := newLadderRun(full)
	r.script.evictions = []error{pdbError(true), pdbError(true)}
	type final struct {
		res Result
		err error
	}
	finals := make(chan final, 1)
	returned := make(chan Result, 1)
	go func() {
		res, _ := r.ladder.EvictThen(context.Background(), request(true), func(res Result, err error) { finals <- final{res, err} })
		returned <- res
	}()
	var first Result
	select {
	case first = <-returned:
	case <-time.After(10 * time.Second):
		t.Fatal("EvictThen did not return before the fallback wait: the caller is held")
	}
	if !first.Continuing || first.Outcome != OutcomeBlockedByPDB || len(first.Attempts) != 1 {
		t.Fatalf("first result %+v, want the refusal with Continuing", first)
	}
	for !r.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	r.clock.Step(DefaultPDBFallbackWait)
	var f final
	select {
	case f = <-finals:
	case <-time.After(10 * time.Second):
		t.Fatal("later was not called after the fallback wait")
	}
	if f.err != nil || f.res.Continuing || f.res.Rung != RungDelete || f.res.Outcome != OutcomeEvicted {
		t.Errorf("final result %+v (err %v), want delete:evicted", f.res, f.err)
	}
	if d := cmp.Diff(r.script.calls, []string{"evict shop/web-0", "evict shop/web-0", "delete shop/web-0"}); d != "" {
		t.Errorf("API calls (-got +want):\n%s", d)
	}
	if d := cmp.Diff(rungs(f.res), []string{"eviction-api:blocked-by-pdb", "eviction-api:blocked-by-pdb", "delete:evicted"}); d != "" {
		t.Errorf("final rungs (-got +want):\n%s", d)
	}
}

// TestLadderWithoutFallbackNeverContinues: a result that needs no wait is final even with later set,
// and later is never called.
func TestLadderWithoutFallbackNeverContinues(t *testing.T) {
	for _, tc := range []struct {
		name string
		hard bool
	}{{"a soft refusal", false}, {"an accepted hard eviction", true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newLadderRun(full)
			if !tc.hard {
				r.script.evictions = []error{pdbError(true)}
			}
			called := false
			res, _ := r.ladder.EvictThen(context.Background(), request(tc.hard), func(Result, error) { called = true })
			if res.Continuing || called {
				t.Errorf("result %+v continuing, later called %v: want a final result", res, called)
			}
		})
	}
}
