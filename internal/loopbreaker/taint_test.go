package loopbreaker

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
)

func TestWithTaint(t *testing.T) {
	theirs := v1.Taint{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}
	ourNoExecute := v1.Taint{Key: TaintKey, Value: "x", Effect: v1.TaintEffectNoExecute}
	ours := func(v string) v1.Taint { return v1.Taint{Key: TaintKey, Value: v, Effect: v1.TaintEffectNoSchedule} }
	cases := []struct {
		name        string
		in          []v1.Taint
		want        []v1.Taint
		wantChanged bool
	}{
		{"adds our taint after the others", []v1.Taint{theirs}, []v1.Taint{theirs, ours("memory.available")}, true},
		{"adds our taint to a node without taints", nil, []v1.Taint{ours("memory.available")}, true},
		{"keeps our taint with the same value unchanged", []v1.Taint{ours("memory.available"), theirs},
			[]v1.Taint{ours("memory.available"), theirs}, false},
		{"refreshes the value in place", []v1.Taint{theirs, ours("nodefs.available")},
			[]v1.Taint{theirs, ours("memory.available")}, true},
		{"leaves a taint of our key with another effect alone", []v1.Taint{ourNoExecute},
			[]v1.Taint{ourNoExecute, ours("memory.available")}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]v1.Taint(nil), tc.in...)
			got, changed := WithTaint(in, TaintKey, "memory.available")
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("taints (-got +want):\n%s", diff)
			}
			if changed != tc.wantChanged {
				t.Errorf("changed %v, want %v", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(in, tc.in); diff != "" {
				t.Errorf("input modified (-got +want):\n%s", diff)
			}
		})
	}
}

func TestWithoutTaint(t *testing.T) {
	theirs := v1.Taint{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}
	ours := v1.Taint{Key: TaintKey, Value: "memory.available", Effect: v1.TaintEffectNoSchedule}
	got, changed := WithoutTaint([]v1.Taint{theirs, ours}, TaintKey)
	if diff := cmp.Diff(got, []v1.Taint{theirs}); diff != "" || !changed {
		t.Errorf("removing ours: changed %v, taints (-got +want):\n%s", changed, diff)
	}
	got, changed = WithoutTaint([]v1.Taint{theirs}, TaintKey)
	if diff := cmp.Diff(got, []v1.Taint{theirs}); diff != "" || changed {
		t.Errorf("removing absent: changed %v, taints (-got +want):\n%s", changed, diff)
	}
}
