package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var deploy = Workload{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "shop", Name: "web", UID: "uid-deploy"}

// lt0 is the loop tests' start (script_test.go's t0 is the scripts').
var lt0 = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

func entryAt(uid string, owner Workload, at time.Time) HistoryEntry {
	return HistoryEntry{UID: uid, Namespace: "shop", Name: "web-" + uid, Owner: owner, Signal: "memory.available",
		Rung: "eviction-api", At: at}
}

func replacementAt(uid string, owner Workload, created, at time.Time) HistoryEntry {
	e := entryAt(uid, owner, at)
	e.Created = created
	return e
}

func TestAnEvictionClosesALoopOnlyWhenAReplacementCameBackWithinTheWindow(t *testing.T) {
	p := LoopConfig{Window: 10 * time.Minute, Cooldown: 5 * time.Minute, LoopCooldown: 30 * time.Minute}
	other := Workload{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "cart-1", UID: "uid-cart"}
	cases := []struct {
		name     string
		second   HistoryEntry
		wantLoop bool
	}{
		{"a replacement created after the first eviction and evicted within the window is a loop",
			replacementAt("new", deploy, lt0.Add(time.Second), lt0.Add(7*time.Minute)), true},
		{"a replacement created in the second of the first eviction is a loop",
			replacementAt("new", deploy, lt0.Truncate(time.Second), lt0.Add(time.Minute)), true},
		{"a replacement evicted exactly at the end of the window is a loop",
			replacementAt("new", deploy, lt0.Add(time.Second), lt0.Add(10*time.Minute)), true},
		{"a replacement evicted after the window is not a loop",
			replacementAt("new", deploy, lt0.Add(time.Second), lt0.Add(10*time.Minute+time.Second)), false},
		{"a second pod of the owner that was already on the node is not a loop",
			replacementAt("sibling", deploy, lt0.Add(-time.Hour), lt0.Add(time.Second)), false},
		{"a pod of unknown creation time is not a loop",
			entryAt("new", deploy, lt0.Add(time.Minute)), false},
		{"a pod of another owner is not a loop",
			replacementAt("new", other, lt0.Add(time.Second), lt0.Add(time.Minute)), false},
		{"a bare pod is never a loop",
			replacementAt("new", Workload{}, lt0.Add(time.Second), lt0.Add(time.Minute)), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			l := NewHistory(p)
			if _, ok := l.Record(entryAt("old", deploy, lt0)); ok {
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
			want := EvictionLoop{Owner: deploy, Pod: PodRef{Namespace: "shop", Name: "web-new", UID: "new"}, Evictions: 2,
				Since: tc.second.At.Sub(lt0), Signal: "memory.available", Until: tc.second.At.Add(30 * time.Minute)}
			if diff := cmp.Diff(loop, want); diff != "" {
				t.Errorf("loop (-got +want):\n%s", diff)
			}
			if !a.Loop || !a.Until.Equal(want.Until) {
				t.Errorf("avoidance %+v, want an escalated one until %s", a, want.Until)
			}
		})
	}
}

func TestALoopNeedsLoopEvictionsOfTheOwnerWithinTheWindow(t *testing.T) {
	l := NewHistory(LoopConfig{LoopEvictions: 3})
	l.Record(entryAt("a", deploy, lt0))
	if _, ok := l.Record(replacementAt("b", deploy, lt0.Add(time.Second), lt0.Add(time.Minute))); ok {
		t.Errorf("second eviction is a loop with loopEvictions 3")
	}
	loop, ok := l.Record(replacementAt("c", deploy, lt0.Add(61*time.Second), lt0.Add(2*time.Minute)))
	if !ok || loop.Evictions != 3 || loop.Since != time.Minute {
		t.Errorf("third eviction: loop %v %+v, want 3 evictions, 1m since the previous", ok, loop)
	}
}

func TestLedgerOfPassesEveryUnsettledEntryOnToTheInFlightRule(t *testing.T) {
	// The ledger stores whether each eviction settled; how long an unsettled one counts as in flight is
	// the in-flight rule's (InFlightRule), so LedgerOf passes an old unsettled entry on as is.
	l := NewHistory(LoopConfig{})
	l.Record(entryAt("a", deploy, lt0))
	l.Record(entryAt("b", deploy, lt0))
	l.Settle("b", lt0.Add(time.Second))
	l.Record(entryAt("old", deploy, lt0.Add(-time.Hour)))
	got := map[string]bool{}
	for _, e := range LedgerOf(l.Entries()).Evictions {
		got[e.UID] = e.Settled
	}
	want := map[string]bool{"a": false, "b": true, "old": false}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("settled by uid (-got +want):\n%s", d)
	}
}

func TestAnEvictionIsFinishedOnceItsPodRunsNoMoreAndOnlyOnce(t *testing.T) {
	// "gone" is no longer listed (or listed in a terminal phase, which the shell leaves out of running);
	// "running" is still listed; "settled" finished before and is not settled again.
	l := NewHistory(LoopConfig{})
	l.Record(entryAt("running", deploy, lt0))
	l.Record(entryAt("gone", deploy, lt0.Add(-time.Second)))
	l.Record(entryAt("settled", deploy, lt0))
	l.Settle("settled", lt0.Add(time.Second))
	got := Finished(l.Entries(), map[string]bool{"running": true})
	if d := cmp.Diff(got, []string{"gone"}); d != "" {
		t.Errorf("finished (-got +want):\n%s", d)
	}
	if got := Finished(l.Entries(), map[string]bool{"running": true, "gone": true}); len(got) != 0 {
		t.Errorf("finished with every pod running: %v, want none", got)
	}
}

func TestPruneKeepsAnUnsettledEntryWhileTheInFlightRuleHolds(t *testing.T) {
	// A window shorter than the in-flight lifetime: the entry outlives the window while the policy
	// still counts it in flight (a restarted agent reads it), and goes once the rule stops holding.
	l := NewHistory(LoopConfig{Window: time.Minute, InFlight: InFlightRule{TTL: 5 * time.Minute}})
	l.Record(entryAt("a", deploy, lt0))
	for _, tc := range []struct {
		at   time.Duration
		want int
	}{{3 * time.Minute, 1}, {5 * time.Minute, 0}} {
		l.Prune(lt0.Add(tc.at))
		if got := len(l.Entries()); got != tc.want {
			t.Errorf("after prune at +%s: %d entries, want %d", tc.at, got, tc.want)
		}
	}
}

func TestHistoryKeepsTheNewestEntriesAndPrunesSettledOnesOutOfTheWindow(t *testing.T) {
	l := NewHistory(LoopConfig{Window: 10 * time.Minute, InFlight: InFlightRule{TTL: 10 * time.Minute}, MaxEntries: 3})
	for i, uid := range []string{"a", "b", "c", "d"} {
		l.Record(entryAt(uid, deploy, lt0.Add(time.Duration(i)*time.Minute)))
	}
	if got := uids(l.Entries()); !cmp.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf("capped entries %v, want the newest three", got)
	}
	l.Settle("b", lt0.Add(2*time.Minute))
	l.Prune(lt0.Add(11*time.Minute + time.Second)) // b settled and out of the window; c not settled, under timeout
	if got := uids(l.Entries()); !cmp.Equal(got, []string{"c", "d"}) {
		t.Errorf("after prune %v, want c d", got)
	}
	l.Prune(lt0.Add(time.Hour))
	if got := l.Entries(); len(got) != 0 {
		t.Errorf("after an hour %v, want none", uids(got))
	}
}

func uids(es []HistoryEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.UID)
	}
	return out
}

func TestAvoidanceAfterSaysWhatAnEvictionWouldDoWithoutChangingTheHistory(t *testing.T) {
	h := NewHistory(LoopConfig{Window: 10 * time.Minute, Cooldown: 5 * time.Minute, LoopCooldown: 30 * time.Minute})
	h.Record(entryAt("old", deploy, lt0))
	entries, avoid := h.Stored()
	cases := []struct {
		name      string
		e         HistoryEntry
		wantLoop  bool
		wantUntil time.Time
	}{
		{"a replacement evicted within the window would close a loop",
			replacementAt("new", deploy, lt0.Add(time.Second), lt0.Add(time.Minute)), true, lt0.Add(31 * time.Minute)},
		{"a pod that was already on the node would extend the cooldown only",
			replacementAt("sibling", deploy, lt0.Add(-time.Hour), lt0.Add(time.Minute)), false, lt0.Add(6 * time.Minute)},
		{"a bare pod would start no avoidance", entryAt("bare", Workload{}, lt0.Add(time.Minute)), false, time.Time{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, _, ok := h.AvoidanceAfter(tc.e)
			if ok != tc.wantLoop || !a.Until.Equal(tc.wantUntil) {
				t.Errorf("AvoidanceAfter: loop %v, avoidance until %s; want loop %v until %s", ok, a.Until, tc.wantLoop, tc.wantUntil)
			}
			gotEntries, gotAvoid := h.Stored()
			if diff := cmp.Diff(gotEntries, entries); diff != "" {
				t.Errorf("Foresee changed the entries (-got +want):\n%s", diff)
			}
			if diff := cmp.Diff(gotAvoid, avoid); diff != "" {
				t.Errorf("Foresee changed the avoidances (-got +want):\n%s", diff)
			}
		})
	}
}

func TestHistoryOfKeepsTheNewestEntriesAndOneAvoidancePerOwner(t *testing.T) {
	entries := []HistoryEntry{entryAt("c", deploy, lt0.Add(2*time.Minute)), entryAt("a", deploy, lt0), entryAt("b", deploy, lt0.Add(time.Minute))}
	avoid := []Avoidance{{Owner: deploy, Until: lt0.Add(time.Minute)}, {Owner: deploy, Until: lt0.Add(time.Hour), Loop: true}}
	h := HistoryOf(LoopConfig{MaxEntries: 2}, entries, avoid)
	if got := uids(h.Entries()); !cmp.Equal(got, []string{"b", "c"}) {
		t.Errorf("entries %v, want the newest two by time", got)
	}
	want := []Avoidance{{Owner: deploy, Until: lt0.Add(time.Hour), Loop: true}}
	if diff := cmp.Diff(h.Avoidances(lt0), want); diff != "" {
		t.Errorf("avoidances (-got +want):\n%s", diff)
	}
}
