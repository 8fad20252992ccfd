package actuate

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"
)

var deploy = Owner{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-deploy"}

func evicted(uid string, owner Owner, at time.Time) Entry {
	return Entry{UID: types.UID(uid), Namespace: "shop", Name: "web-" + uid, Owner: owner, Signal: "memory.available",
		Rung: RungEviction, At: at}
}

func TestLedgerLoopDetection(t *testing.T) {
	p := LedgerPolicy{Window: 10 * time.Minute, Cooldown: 5 * time.Minute}
	other := Owner{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "cart", UID: "uid-cart"}
	cases := []struct {
		name     string
		arrive   Arrival
		at       time.Duration // after the eviction
		wantLoop bool
	}{
		{"replacement of the evicted owner within the window is a loop",
			Arrival{UID: "new", Namespace: "shop", Name: "web-new", Owner: deploy}, 30 * time.Second, true},
		{"replacement exactly at the end of the window is a loop",
			Arrival{UID: "new", Namespace: "shop", Name: "web-new", Owner: deploy}, 10 * time.Minute, true},
		{"replacement after the window is not a loop",
			Arrival{UID: "new", Namespace: "shop", Name: "web-new", Owner: deploy}, 10*time.Minute + time.Second, false},
		{"a pod of another owner is not a loop",
			Arrival{UID: "new", Namespace: "shop", Name: "cart-new", Owner: other}, 30 * time.Second, false},
		{"a bare pod is never a loop",
			Arrival{UID: "new", Namespace: "shop", Name: "bare"}, 30 * time.Second, false},
		{"the evicted pod itself seen again is not a loop",
			Arrival{UID: "old", Namespace: "shop", Name: "web-old", Owner: deploy}, 30 * time.Second, false},
		{"an owner matched by kind and name when a UID is missing is a loop",
			Arrival{UID: "new", Namespace: "shop", Name: "web-new", Owner: Owner{Kind: "Deployment", Namespace: "shop", Name: "web"}}, time.Minute, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger(p)
			l.Record(evicted("old", deploy, t0))
			now := t0.Add(tc.at)
			loop, ok := l.Observe(tc.arrive, now)
			if ok != tc.wantLoop {
				t.Fatalf("loop %v (%+v), want %v", ok, loop, tc.wantLoop)
			}
			hold, held := l.Hold(now)
			if held != tc.wantLoop {
				t.Errorf("hold %v, want %v", held, tc.wantLoop)
			}
			if !ok {
				return
			}
			want := Loop{Owner: tc.arrive.Owner, Pod: tc.arrive, Evictions: 1, Since: tc.at, Signal: "memory.available", Until: now.Add(5 * time.Minute)}
			if diff := cmp.Diff(loop, want); diff != "" {
				t.Errorf("loop (-got +want):\n%s", diff)
			}
			if hold.Signal != "memory.available" || !hold.Until.Equal(now.Add(5*time.Minute)) {
				t.Errorf("hold %+v, want memory.available until %s", hold, now.Add(5*time.Minute))
			}
		})
	}
}

func TestLedgerCountsEachReplacementOnceAndExtendsTheHold(t *testing.T) {
	l := NewLedger(LedgerPolicy{Window: 10 * time.Minute, Cooldown: 5 * time.Minute})
	l.Record(evicted("a", deploy, t0))
	l.Record(evicted("b", deploy, t0.Add(time.Minute)))
	r1 := Arrival{UID: "c", Namespace: "shop", Name: "web-c", Owner: deploy}
	loop, ok := l.Observe(r1, t0.Add(2*time.Minute))
	if !ok || loop.Evictions != 2 || loop.Since != time.Minute {
		t.Errorf("first replacement: loop %v %+v, want 2 evictions 1m ago", ok, loop)
	}
	if _, again := l.Observe(r1, t0.Add(3*time.Minute)); again {
		t.Errorf("the same replacement counted twice")
	}
	r2 := Arrival{UID: "d", Namespace: "shop", Name: "web-d", Owner: deploy}
	loop, ok = l.Observe(r2, t0.Add(4*time.Minute))
	if !ok || !loop.Until.Equal(t0.Add(9*time.Minute)) {
		t.Errorf("second replacement: loop %v until %s, want until %s", ok, loop.Until, t0.Add(9*time.Minute))
	}
	if _, held := l.Hold(t0.Add(9 * time.Minute)); held {
		t.Errorf("hold still on at its end")
	}
	if _, held := l.Hold(t0.Add(9*time.Minute - time.Nanosecond)); !held {
		t.Errorf("hold off before its end")
	}
}

func TestLedgerInFlight(t *testing.T) {
	l := NewLedger(LedgerPolicy{InFlightTimeout: 10 * time.Minute})
	l.Record(evicted("a", deploy, t0))
	l.Record(evicted("b", deploy, t0))
	l.Settle("b", t0.Add(time.Second))
	cases := []struct {
		name string
		uid  types.UID
		at   time.Duration
		want bool
	}{
		{"an unsettled eviction is in flight", "a", time.Minute, true},
		{"a settled eviction is not in flight", "b", time.Minute, false},
		{"an unsettled eviction past the timeout is not in flight", "a", 10 * time.Minute, false},
		{"an unknown pod is not in flight", "z", time.Minute, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := l.InFlight(tc.uid, t0.Add(tc.at)); got != tc.want {
				t.Errorf("InFlight(%s) = %v, want %v", tc.uid, got, tc.want)
			}
		})
	}
}

func TestLedgerPruneAndCap(t *testing.T) {
	l := NewLedger(LedgerPolicy{Window: 10 * time.Minute, InFlightTimeout: 10 * time.Minute, MaxEntries: 3})
	for i, uid := range []string{"a", "b", "c", "d"} {
		l.Record(evicted(uid, deploy, t0.Add(time.Duration(i)*time.Minute)))
	}
	if got := uids(l.Entries()); !cmp.Equal(got, []types.UID{"b", "c", "d"}) {
		t.Errorf("capped entries %v, want the newest three", got)
	}
	l.Settle("b", t0.Add(2*time.Minute))
	l.Prune(t0.Add(11*time.Minute + time.Second)) // b settled and out of the window; c not settled, under timeout
	if got := uids(l.Entries()); !cmp.Equal(got, []types.UID{"c", "d"}) {
		t.Errorf("after prune %v, want c d", got)
	}
	l.Prune(t0.Add(time.Hour))
	if got := l.Entries(); len(got) != 0 {
		t.Errorf("after an hour %v, want none", uids(got))
	}
}

func uids(es []Entry) []types.UID {
	var out []types.UID
	for _, e := range es {
		out = append(out, e.UID)
	}
	return out
}

func TestLedgerRoundTrip(t *testing.T) {
	l := NewLedger(LedgerPolicy{})
	l.Record(evicted("a", deploy, t0))
	l.Settle("a", t0.Add(time.Minute))
	l.Record(evicted("b", Owner{}, t0.Add(time.Second)))
	l.Observe(Arrival{UID: "c", Namespace: "shop", Name: "web-c", Owner: deploy}, t0.Add(2*time.Minute))
	var b bytes.Buffer
	if err := WriteLedger(&b, l); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLedger(&b, LedgerPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got.Entries(), l.Entries()); diff != "" {
		t.Errorf("entries (-got +want):\n%s", diff)
	}
	gh, _ := got.Hold(t0.Add(2 * time.Minute))
	wh, _ := l.Hold(t0.Add(2 * time.Minute))
	if diff := cmp.Diff(gh, wh); diff != "" {
		t.Errorf("hold (-got +want):\n%s", diff)
	}
}

func TestReadLedgerRejects(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"unknown version", `{"version":2,"entries":[]}`, "ledger version 2"},
		{"unknown field", `{"version":1,"entries":[],"extra":1}`, `unknown field "extra"`},
		{"entry without uid", `{"version":1,"entries":[{"namespace":"a","name":"b","at":"2026-01-01T00:00:00Z"}]}`, "uid, namespace, name and at are required"},
		{"not json", `ledger`, "decode ledger"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadLedger(strings.NewReader(tc.in), LedgerPolicy{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	_, err := ReadLedger(strings.NewReader(`{"version":7}`), LedgerPolicy{})
	if !errors.Is(err, ErrLedgerVersion) {
		t.Errorf("error %v does not wrap ErrLedgerVersion", err)
	}
}

func TestPersistentLedgerSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	store := &memStore{}
	first, err := LoadLedger(ctx, store, LedgerPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Record(ctx, evicted("a", deploy, t0)); err != nil {
		t.Fatal(err)
	}
	second, err := LoadLedger(ctx, store, LedgerPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if !second.InFlight("a", t0.Add(time.Minute)) {
		t.Errorf("restarted ledger forgot the eviction in flight: %s", store.data)
	}
}

func FuzzReadLedger(f *testing.F) {
	var b bytes.Buffer
	l := NewLedger(LedgerPolicy{})
	l.Record(evicted("a", deploy, t0))
	l.Observe(Arrival{UID: "c", Namespace: "shop", Name: "web-c", Owner: deploy}, t0.Add(time.Minute))
	_ = WriteLedger(&b, l)
	f.Add(b.String())
	f.Add(`{"version":1,"entries":[]}`)
	f.Add(`{"version":1,"hold":{"signal":"x","until":"2026-01-01T00:00:00Z"}}`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, in string) {
		l, err := ReadLedger(strings.NewReader(in), LedgerPolicy{})
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteLedger(&out, l); err != nil {
			t.Fatalf("write of a read ledger: %v", err)
		}
		again, err := ReadLedger(&out, LedgerPolicy{})
		if err != nil {
			t.Fatalf("re-read of %q: %v", out.String(), err)
		}
		if diff := cmp.Diff(again.Entries(), l.Entries()); diff != "" {
			t.Fatalf("round trip (-got +want):\n%s", diff)
		}
	})
}
