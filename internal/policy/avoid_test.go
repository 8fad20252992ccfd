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
