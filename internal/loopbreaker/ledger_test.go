package loopbreaker

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/loopbreaker/loopbreakertest"
	"github.com/kube-pressure/pressure/internal/policy"
)

var deploy = policy.Workload{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-deploy"}

var t0 = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

func evicted(uid string, owner policy.Workload, at time.Time) policy.HistoryEntry {
	return policy.HistoryEntry{UID: uid, Namespace: "shop", Name: "web-" + uid, Owner: owner, Signal: "memory.available",
		Rung: "eviction-api", At: at}
}

func replacement(uid string, owner policy.Workload, created, at time.Time) policy.HistoryEntry {
	e := evicted(uid, owner, at)
	e.Created = created
	return e
}

// unsettled reports whether entries hold an eviction of uid not settled.
func unsettled(entries []policy.HistoryEntry, uid string) bool {
	for _, e := range entries {
		if e.UID == uid {
			return e.SettledAt == nil
		}
	}
	return false
}

func TestLedgerRoundTrip(t *testing.T) {
	l := policy.NewHistory(policy.LoopConfig{})
	l.Record(evicted("a", deploy, t0))
	l.Settle("a", t0.Add(time.Minute))
	l.Record(evicted("b", policy.Workload{}, t0.Add(time.Second)))
	l.Record(replacement("c", deploy, t0.Add(time.Second), t0.Add(2*time.Minute)))
	var b bytes.Buffer
	if err := WriteLedger(&b, l); err != nil {
		t.Fatal(err)
	}
	got, err := ReadLedger(&b, policy.LoopConfig{})
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
			_, err := ReadLedger(strings.NewReader(tc.in), policy.LoopConfig{})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	_, err := ReadLedger(strings.NewReader(`{"version":7}`), policy.LoopConfig{})
	if !errors.Is(err, ErrLedgerVersion) {
		t.Errorf("error %v does not wrap ErrLedgerVersion", err)
	}
}

func TestPersistentLedgerSurvivesARestart(t *testing.T) {
	ctx := context.Background()
	store := &loopbreakertest.Store{}
	first, err := LoadLedger(ctx, store, policy.LoopConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := first.Record(ctx, evicted("a", deploy, t0)); err != nil {
		t.Fatal(err)
	}
	second, err := LoadLedger(ctx, store, policy.LoopConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !unsettled(second.Entries(), "a") {
		t.Errorf("restarted ledger forgot the eviction in flight: %s", store.Data)
	}
}

func FuzzReadLedger(f *testing.F) {
	var b bytes.Buffer
	l := policy.NewHistory(policy.LoopConfig{})
	l.Record(evicted("a", deploy, t0))
	l.Record(replacement("c", deploy, t0.Add(time.Second), t0.Add(time.Minute)))
	_ = WriteLedger(&b, l)
	f.Add(b.String())
	f.Add(`{"version":1,"entries":[]}`)
	f.Add(`{"version":1,"hold":{"signal":"x","until":"2026-01-01T00:00:00Z"}}`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, in string) {
		l, err := ReadLedger(strings.NewReader(in), policy.LoopConfig{})
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteLedger(&out, l); err != nil {
			t.Fatalf("write of a read ledger: %v", err)
		}
		again, err := ReadLedger(&out, policy.LoopConfig{})
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
	l, err := ReadLedger(strings.NewReader(in), policy.LoopConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Entries(); len(got) != 1 || got[0].UID != "a" {
		t.Errorf("entries %+v, want a", got)
	}
	var b bytes.Buffer
	if err := WriteLedger(&b, l); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); strings.Contains(s, "hold") || strings.Contains(s, "replacements") || !strings.Contains(s, `"version":2`) {
		t.Errorf("rewritten ledger %s, want version 2 without the hold and the replacements", s)
	}
}

func TestAvoidanceDataRoundsTheEndUp(t *testing.T) {
	got := AvoidanceData([]policy.Avoidance{
		{Owner: policy.Workload{UID: "u1"}, Until: t0.Add(1500 * time.Millisecond)},
		{Owner: policy.Workload{UID: "u2"}, Until: t0.In(time.FixedZone("CET", 3600))},
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
			l, err := LoadLedger(ctx, store, policy.LoopConfig{}, nil)
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
	stored := policy.NewHistory(policy.LoopConfig{})
	stored.Record(evicted("old", deploy, t0))
	var b bytes.Buffer
	if err := WriteLedger(&b, stored); err != nil {
		t.Fatal(err)
	}
	store := &loopbreakertest.Store{Data: b.Bytes()}
	l := NewPendingLedger(store, policy.LoopConfig{}, nil)
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

func TestWriteLedgerKeepsTheStoredFormat(t *testing.T) {
	// Written by the agent before the loop rules moved to internal/policy: every field of an entry and
	// of an avoidance. Reading and writing it again gives the same bytes.
	stored := `{"version":2,"entries":[` +
		`{"uid":"a","namespace":"shop","name":"web-a","owner":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop","name":"web","uid":"uid-deploy"},` +
		`"signal":"memory.available","rung":"eviction-api","at":"2026-11-29T15:00:00Z","settledAt":"2026-11-29T15:01:00Z"},` +
		`{"uid":"b","namespace":"shop","name":"bare","at":"2026-11-29T15:00:01Z"},` +
		`{"uid":"c","namespace":"shop","name":"web-c","owner":{"kind":"Deployment","namespace":"shop","name":"web","uid":"uid-deploy"},` +
		`"at":"2026-11-29T15:02:00Z","created":"2026-11-29T15:00:01Z"}],` +
		`"avoidances":[{"owner":{"apiVersion":"apps/v1","kind":"Deployment","namespace":"shop","name":"web","uid":"uid-deploy"},"until":"2026-11-29T15:32:00Z","loop":true}]}` + "\n"
	l, err := ReadLedger(strings.NewReader(stored), policy.LoopConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteLedger(&b, l); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(b.String(), stored); diff != "" {
		t.Errorf("written again (-got +want):\n%s", diff)
	}
}

// failingStore is a store whose saves fail while down (the API server stopped).
type failingStore struct {
	loopbreakertest.Store
	down bool
}

func (s *failingStore) Save(ctx context.Context, b []byte) error {
	if s.down {
		return errors.New("connection refused")
	}
	return s.Store.Save(ctx, b)
}

// An entry expires while the API server is down: the prune's save fails. The next prune has nothing new
// to prune, but the store is behind, so it saves: the stored ledger forgets the entry as soon as the
// API server is back, not at the next eviction (soak seed 20261205, fourth run: an entry kept 11m16s).
func TestAPruneWhoseSaveFailedIsSavedByTheNextPrune(t *testing.T) {
	ctx := context.Background()
	store := &failingStore{}
	l, err := LoadLedger(ctx, store, policy.LoopConfig{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Record(ctx, evicted("a", deploy, t0)); err != nil {
		t.Fatal(err)
	}
	store.down = true
	if err := l.Prune(ctx, t0.Add(11*time.Minute)); err == nil {
		t.Fatal("prune with the store down returned no error")
	}
	store.down = false
	if err := l.Prune(ctx, t0.Add(11*time.Minute+time.Second)); err != nil {
		t.Fatal(err)
	}
	stored, err := ReadLedger(bytes.NewReader(store.Data), policy.LoopConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(stored.Entries()); n != 0 {
		t.Errorf("the store still holds %d entries after the API server came back: %s", n, store.Data)
	}
}
