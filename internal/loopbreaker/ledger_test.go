package loopbreaker

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/loopbreaker/loopbreakertest"
	"github.com/kube-pressure/pressure/internal/owner"
	"github.com/kube-pressure/pressure/internal/policy"
)

var deploy = owner.Ref{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-deploy"}

var t0 = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

func evicted(uid string, owner owner.Ref, at time.Time) Entry {
	return Entry{UID: types.UID(uid), Namespace: "shop", Name: "web-" + uid, Owner: owner, Signal: "memory.available",
		Rung: "eviction-api", At: at}
}

func replacement(uid string, owner owner.Ref, created, at time.Time) Entry {
	e := evicted(uid, owner, at)
	e.Created = created
	return e
}

func TestLedgerLoopDetection(t *testing.T) {
	p := LedgerPolicy{Window: 10 * time.Minute, Cooldown: 5 * time.Minute, LoopCooldown: 30 * time.Minute}
	other := owner.Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "cart-1", UID: "uid-cart"}
	cases := []struct {
		name     string
		second   Entry
		wantLoop bool
	}{
		{"a replacement created after the first eviction and evicted within the window is a loop",
			replacement("new", deploy, t0.Add(time.Second), t0.Add(7*time.Minute)), true},
		{"a replacement created in the second of the first eviction is a loop",
			replacement("new", deploy, t0.Truncate(time.Second), t0.Add(time.Minute)), true},
		{"a replacement evicted exactly at the end of the window is a loop",
			replacement("new", deploy, t0.Add(time.Second), t0.Add(10*time.Minute)), true},
		{"a replacement evicted after the window is not a loop",
			replacement("new", deploy, t0.Add(time.Second), t0.Add(10*time.Minute+time.Second)), false},
		{"a second pod of the owner that was already on the node is not a loop",
			replacement("sibling", deploy, t0.Add(-time.Hour), t0.Add(time.Second)), false},
		{"a pod of unknown creation time is not a loop",
			evicted("new", deploy, t0.Add(time.Minute)), false},
		{"a pod of another owner is not a loop",
			replacement("new", other, t0.Add(time.Second), t0.Add(time.Minute)), false},
		{"a bare pod is never a loop",
			replacement("new", owner.Ref{}, t0.Add(time.Second), t0.Add(time.Minute)), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := NewLedger(p)
			if _, ok := l.Record(evicted("old", deploy, t0)); ok {
				t.Fatalf("the first eviction is a loop")
			}
			loop, ok := l.Record(tc.second)
			if ok != tc.wantLoop {
				t.Fatalf("loop %v (%+v), want %v", ok, loop, tc.wantLoop)
			}
			a := l.Avoidance(deploy)
			if !ok {
				return
			}
			want := EvictionLoop{Owner: deploy, Pod: Pod{Namespace: "shop", Name: "web-new", UID: "new"}, Evictions: 2,
				Since: tc.second.At.Sub(t0), Signal: "memory.available", Until: tc.second.At.Add(30 * time.Minute)}
			if diff := cmp.Diff(loop, want); diff != "" {
				t.Errorf("loop (-got +want):\n%s", diff)
			}
			if !a.Loop || !a.Until.Equal(want.Until) {
				t.Errorf("avoidance %+v, want an escalated one until %s", a, want.Until)
			}
		})
	}
}

func TestLedgerLoopNeedsLoopEvictions(t *testing.T) {
	l := NewLedger(LedgerPolicy{LoopEvictions: 3})
	l.Record(evicted("a", deploy, t0))
	if _, ok := l.Record(replacement("b", deploy, t0.Add(time.Second), t0.Add(time.Minute))); ok {
		t.Errorf("second eviction is a loop with loopEvictions 3")
	}
	loop, ok := l.Record(replacement("c", deploy, t0.Add(61*time.Second), t0.Add(2*time.Minute)))
	if !ok || loop.Evictions != 3 || loop.Since != time.Minute {
		t.Errorf("third eviction: loop %v %+v, want 3 evictions, 1m since the previous", ok, loop)
	}
}

func TestLedgerAvoidances(t *testing.T) {
	ds := owner.Ref{Kind: "DaemonSet", Namespace: "kube-system", Name: "logs", UID: "uid-ds"}
	static := owner.Ref{Kind: "Node", Name: "node-a", UID: "uid-node"}
	rs := owner.Ref{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-1", UID: "uid-rs"}
	l := NewLedger(LedgerPolicy{Cooldown: 5 * time.Minute})
	l.Record(evicted("a", rs, t0))
	l.Record(evicted("b", owner.Ref{}, t0))
	l.Record(evicted("c", ds, t0))
	l.Record(evicted("d", static, t0))
	l.Record(evicted("e", owner.Ref{Kind: "ReplicaSet", Namespace: "shop", Name: "no-uid"}, t0))
	want := []Avoidance{{Owner: rs, Until: t0.Add(5 * time.Minute)}}
	if diff := cmp.Diff(l.Avoidances(t0.Add(time.Minute)), want); diff != "" {
		t.Errorf("only the ReplicaSet with a UID avoids the node (-got +want):\n%s", diff)
	}
	if got := l.Avoidances(t0.Add(5 * time.Minute)); len(got) != 0 {
		t.Errorf("avoidances at the end of the cooldown: %+v, want none", got)
	}
	l.Record(evicted("f", rs, t0.Add(2*time.Minute)))
	if got := l.Avoidance(rs).Until; !got.Equal(t0.Add(7 * time.Minute)) {
		t.Errorf("a later eviction extends the avoidance to %s, got %s", t0.Add(7*time.Minute), got)
	}
	if !l.Prune(t0.Add(7*time.Minute)) || len(l.Avoidances(t0)) != 0 {
		t.Errorf("prune at the end keeps %+v", l.Avoidances(t0))
	}
}

func TestLedgerRestoreTakesBackAnAvoidance(t *testing.T) {
	l := NewLedger(LedgerPolicy{Cooldown: 5 * time.Minute})
	prev := l.Avoidance(deploy)
	l.Avoid(deploy, t0.Add(5*time.Minute), false)
	l.Restore(deploy, prev)
	if got := l.Avoidances(t0); len(got) != 0 {
		t.Errorf("after restoring none: %+v", got)
	}
	l.Avoid(deploy, t0.Add(time.Minute), true)
	prev = l.Avoidance(deploy)
	l.Avoid(deploy, t0.Add(5*time.Minute), false)
	l.Restore(deploy, prev)
	if diff := cmp.Diff(l.Avoidance(deploy), prev); diff != "" {
		t.Errorf("restored (-got +want):\n%s", diff)
	}
}

func TestLedgerStoresWhatThePolicyReadsAsInFlight(t *testing.T) {
	// The ledger stores whether each eviction settled; how long an unsettled one counts as in flight is
	// the policy's rule (policy.InFlightRule), so PolicyLedger passes an old unsettled entry on as is.
	l := NewLedger(LedgerPolicy{})
	l.Record(evicted("a", deploy, t0))
	l.Record(evicted("b", deploy, t0))
	l.Settle("b", t0.Add(time.Second))
	l.Record(evicted("old", deploy, t0.Add(-time.Hour)))
	got := map[string]bool{}
	for _, e := range PolicyLedger(l.Entries()).Evictions {
		got[e.UID] = e.Settled
	}
	want := map[string]bool{"a": false, "b": true, "old": false}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("settled by uid (-got +want):\n%s", d)
	}
}

// unsettled reports whether entries hold an eviction of uid not settled.
func unsettled(entries []Entry, uid types.UID) bool {
	for _, e := range entries {
		if e.UID == uid {
			return e.SettledAt == nil
		}
	}
	return false
}

func TestLedgerKeepsAnUnsettledEntryWhileThePolicysInFlightRuleHolds(t *testing.T) {
	// A window shorter than the in-flight lifetime: the entry outlives the window while the policy
	// still counts it in flight (a restarted agent reads it), and goes once the rule stops holding.
	l := NewLedger(LedgerPolicy{Window: time.Minute, InFlight: policy.InFlightRule{TTL: 5 * time.Minute}})
	l.Record(evicted("a", deploy, t0))
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{3 * time.Minute, 1}, {5 * time.Minute, 0}} {
		l.Prune(t0.Add(tc.at))
		if got := len(l.Entries()); got != tc.want {
			t.Errorf("after prune at +%s: %d entries, want %d", tc.at, got, tc.want)
		}
	}
}

func TestLedgerPruneAndCap(t *testing.T) {
	l := NewLedger(LedgerPolicy{Window: 10 * time.Minute, InFlight: policy.InFlightRule{TTL: 10 * time.Minute}, MaxEntries: 3})
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
	l.Record(evicted("b", owner.Ref{}, t0.Add(time.Second)))
	l.Record(replacement("c", deploy, t0.Add(time.Second), t0.Add(2*time.Minute)))
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
	if diff := cmp.Diff(got.Avoidances(t0), l.Avoidances(t0)); diff != "" || len(got.Avoidances(t0)) != 1 {
		t.Errorf("avoidances (-got +want):\n%s", diff)
	}
}

func TestReadLedgerRejects(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"unknown version", `{"version":3,"entries":[]}`, "ledger version 3"},
		{"avoidance without owner uid", `{"version":2,"entries":[],"avoidances":[{"owner":{"kind":"ReplicaSet"},"until":"2026-01-01T00:00:00Z"}]}`,
			"owner uid and until are required"},
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
	store := &loopbreakertest.Store{}
	first, err := LoadLedger(ctx, store, LedgerPolicy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := first.Record(ctx, evicted("a", deploy, t0)); err != nil {
		t.Fatal(err)
	}
	second, err := LoadLedger(ctx, store, LedgerPolicy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !unsettled(second.Entries(), "a") {
		t.Errorf("restarted ledger forgot the eviction in flight: %s", store.Data)
	}
}

func FuzzReadLedger(f *testing.F) {
	var b bytes.Buffer
	l := NewLedger(LedgerPolicy{})
	l.Record(evicted("a", deploy, t0))
	l.Record(replacement("c", deploy, t0.Add(time.Second), t0.Add(time.Minute)))
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
		if diff := cmp.Diff(again.Avoidances(time.Time{}), l.Avoidances(time.Time{})); diff != "" {
			t.Fatalf("avoidances round trip (-got +want):\n%s", diff)
		}
	})
}

func TestReadLedgerVersion1DropsTheHoldAndTheReplacements(t *testing.T) {
	in := `{"version":1,"entries":[{"uid":"a","namespace":"shop","name":"web-a","at":"2026-11-29T15:00:00Z","replacements":["c"]}],` +
		`"hold":{"signal":"memory.available","until":"2026-11-29T15:05:00Z"}}`
	l, err := ReadLedger(strings.NewReader(in), LedgerPolicy{})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Entries(); len(got) != 1 || got[0].UID != "a" || len(got[0].Replacements) != 0 {
		t.Errorf("entries %+v, want a without replacements", got)
	}
	var b bytes.Buffer
	if err := WriteLedger(&b, l); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, "hold") || !strings.Contains(s, `"version":2`) {
		t.Errorf("rewritten ledger %s, want version 2 without the hold", s)
	}
}

func TestAvoidanceDataRoundsTheEndUp(t *testing.T) {
	got := AvoidanceData([]Avoidance{
		{Owner: owner.Ref{UID: "u1"}, Until: t0.Add(1500 * time.Millisecond)},
		{Owner: owner.Ref{UID: "u2"}, Until: t0.In(time.FixedZone("CET", 3600))},
	})
	want := map[string]string{"u1": "2026-11-29T15:00:02Z", "u2": "2026-11-29T15:00:00Z"}
	if diff := cmp.Diff(got, want); diff != "" {
		t.Errorf("data (-got +want):\n%s", diff)
	}
	if _, err := AvoidanceName("pressure-avoid-", strings.Repeat("n", 250)); err == nil {
		t.Errorf("a name longer than 253 characters was accepted")
	}
}

func TestLoadLedgerStartsEmptyOnAnUnreadableLedgerAndKeepsANewerOne(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, stored string
		newer        bool
	}{
		{"corrupt JSON", `{"version":2,"entries":[`, false},
		{"invalid entry", `{"version":2,"entries":[{"uid":"a"}]}`, false},
		{"unknown old version", `{"version":0}`, false},
		{"newer version with new fields", `{"version":3,"entries":[],"budget":{"x":1}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &loopbreakertest.Store{Data: []byte(tc.stored)}
			l, err := LoadLedger(ctx, store, LedgerPolicy{}, nil)
			if err != nil {
				t.Fatalf("LoadLedger: %v, want an empty ledger and the reason in Unreadable", err)
			}
			u := l.Unreadable()
			if u == nil || u.Value != tc.stored || u.Newer != tc.newer {
				t.Fatalf("Unreadable() = %+v, want value %q newer %v", u, tc.stored, tc.newer)
			}
			if len(l.Entries()) != 0 {
				t.Errorf("entries %v, want none", l.Entries())
			}
			if _, _, err := l.Record(ctx, evicted("b", deploy, t0)); err != nil {
				t.Fatal(err)
			}
			if !unsettled(l.Entries(), "b") {
				t.Errorf("the in-memory ledger does not hold the new eviction")
			}
			kept := string(store.Data) == tc.stored
			if kept != tc.newer {
				t.Errorf("stored after a change: %s; want it kept only when a newer agent wrote it", store.Data)
			}
		})
	}
}

func TestPendingLedgerSavesNothingUntilLoadedThenMerges(t *testing.T) {
	ctx := context.Background()
	stored := NewLedger(LedgerPolicy{})
	stored.Record(evicted("old", deploy, t0))
	var b bytes.Buffer
	if err := WriteLedger(&b, stored); err != nil {
		t.Fatal(err)
	}
	store := &loopbreakertest.Store{Data: b.Bytes()}
	l := NewPendingLedger(store, LedgerPolicy{}, nil)
	if _, _, err := l.Record(ctx, evicted("new", deploy, t0.Add(time.Minute))); err != nil {
		t.Fatal(err)
	}
	if store.Saves() != 0 || l.Loaded() {
		t.Fatalf("a pending ledger saved (%d) or says it is loaded (%v): it would overwrite the stored one unread", store.Saves(), l.Loaded())
	}
	if err := l.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if !unsettled(l.Entries(), "old") || !unsettled(l.Entries(), "new") {
		t.Errorf("merged ledger lost an eviction: %+v", l.Entries())
	}
	if store.Saves() != 1 || !strings.Contains(string(store.Data), `"old"`) || !strings.Contains(string(store.Data), `"new"`) {
		t.Errorf("after Load: %d saves, stored %s; want one save holding both", store.Saves(), store.Data)
	}
}
