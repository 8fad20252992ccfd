package policy

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestOnlyAvoidableOwnersAvoidTheNodeForTheCooldown(t *testing.T) {
	ds := Workload{Kind: "DaemonSet", Namespace: "kube-system", Name: "logs", UID: "uid-ds"}
	static := Workload{Kind: "Node", Name: "node-a", UID: "uid-node"}
	rs := Workload{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "web-1", UID: "uid-rs"}
	l := NewHistory(LoopConfig{Cooldown: 5 * time.Minute})
	l.Record(entryAt("a", rs, lt0))
	l.Record(entryAt("b", Workload{}, lt0))
	l.Record(entryAt("c", ds, lt0))
	l.Record(entryAt("d", static, lt0))
	l.Record(entryAt("e", Workload{Kind: "ReplicaSet", Namespace: "shop", Name: "no-uid"}, lt0))
	want := []Avoidance{{Owner: rs, Until: lt0.Add(5 * time.Minute)}}
	if diff := cmp.Diff(l.Avoidances(lt0.Add(time.Minute)), want); diff != "" {
		t.Errorf("only the ReplicaSet with a UID avoids the node (-got +want):\n%s", diff)
	}
	if got := l.Avoidances(lt0.Add(5 * time.Minute)); len(got) != 0 {
		t.Errorf("avoidances at the end of the cooldown: %+v, want none", got)
	}
	l.Record(entryAt("f", rs, lt0.Add(2*time.Minute)))
	if got := l.Avoidance(rs).Until; !got.Equal(lt0.Add(7 * time.Minute)) {
		t.Errorf("a later eviction extends the avoidance to %s, got %s", lt0.Add(7*time.Minute), got)
	}
	if !l.Prune(lt0.Add(7*time.Minute)) || len(l.Avoidances(lt0)) != 0 {
		t.Errorf("prune at the end keeps %+v", l.Avoidances(lt0))
	}
}

func TestRestoreTakesBackAnAvoidance(t *testing.T) {
	l := NewHistory(LoopConfig{Cooldown: 5 * time.Minute})
	prev := l.Avoidance(deploy)
	l.Avoid(deploy, lt0.Add(5*time.Minute), false)
	l.Restore(deploy, prev)
	if got := l.Avoidances(lt0); len(got) != 0 {
		t.Errorf("after restoring none: %+v", got)
	}
	l.Avoid(deploy, lt0.Add(time.Minute), true)
	prev = l.Avoidance(deploy)
	l.Avoid(deploy, lt0.Add(5*time.Minute), false)
	l.Restore(deploy, prev)
	if diff := cmp.Diff(l.Avoidance(deploy), prev); diff != "" {
		t.Errorf("restored (-got +want):\n%s", diff)
	}
}

func TestAvoidKeepsAtMostMaxEntriesAvoidancesDroppingThoseThatEndFirst(t *testing.T) {
	rs := func(uid string) Workload {
		return Workload{APIVersion: "apps/v1", Kind: "ReplicaSet", Namespace: "shop", Name: "rs-" + uid, UID: uid}
	}
	cases := []struct {
		name string
		ends map[string]time.Duration // owner UID -> end after lt0, avoided in UID order
		want []string
	}{
		{"the avoidance that ends first goes",
			map[string]time.Duration{"a": 3 * time.Minute, "b": time.Minute, "c": 2 * time.Minute}, []string{"a", "c"}},
		{"the newest avoidance goes when it ends first",
			map[string]time.Duration{"a": 3 * time.Minute, "b": 2 * time.Minute, "c": time.Minute}, []string{"a", "b"}},
		{"of avoidances that end together the lower owner UID goes",
			map[string]time.Duration{"a": time.Minute, "b": time.Minute, "c": time.Minute}, []string{"b", "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHistory(LoopConfig{MaxEntries: 2})
			for _, uid := range []string{"a", "b", "c"} {
				h.Avoid(rs(uid), lt0.Add(tc.ends[uid]), false)
			}
			var got []string
			for _, a := range h.Avoidances(lt0) {
				got = append(got, a.Owner.UID)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("owners still avoiding (-got +want):\n%s", diff)
			}
		})
	}
}

func TestAvoidBeforeAnEvictionIsTheCooldownForAnAvoidableOwnerOnly(t *testing.T) {
	cases := []struct {
		name      string
		owner     Workload
		before    time.Duration // an avoidance in force before, ending then after lt0 (0: none)
		wantOK    bool
		wantUntil time.Duration // the avoidance in force after (0: none)
	}{
		{"an avoidable owner avoids the node for the cooldown", deploy, 0, true, 5 * time.Minute},
		{"a longer avoidance in force is kept", deploy, time.Hour, true, time.Hour},
		{"a shorter avoidance in force is extended to the cooldown", deploy, time.Minute, true, 5 * time.Minute},
		{"a bare pod's owner gets nothing", Workload{}, 0, false, 0},
		{"a DaemonSet gets nothing", Workload{Kind: "DaemonSet", Namespace: "kube-system", Name: "logs", UID: "uid-ds"}, 0, false, 0},
		{"an owner without a UID gets nothing", Workload{Kind: "ReplicaSet", Namespace: "shop", Name: "web"}, 0, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := NewHistory(LoopConfig{Cooldown: 5 * time.Minute})
			var want Avoidance
			if tc.before > 0 {
				want = h.Avoid(tc.owner, lt0.Add(tc.before), false)
			}
			prev, ok := h.AvoidBefore(tc.owner, lt0)
			if ok != tc.wantOK || !cmp.Equal(prev, want) {
				t.Errorf("AvoidBefore = %+v, %v; want %+v, %v", prev, ok, want, tc.wantOK)
			}
			got := h.Avoidance(tc.owner).Until
			if wantUntil := lt0.Add(tc.wantUntil); tc.wantUntil == 0 && !got.IsZero() || tc.wantUntil > 0 && !got.Equal(wantUntil) {
				t.Errorf("avoidance until %s, want %s after %s", got, tc.wantUntil, lt0)
			}
		})
	}
}
