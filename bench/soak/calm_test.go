package soak

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestUnrest(t *testing.T) {
	node := func(conds ...corev1.NodeCondition) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: conds}}
	}
	cond := func(typ corev1.NodeConditionType, s corev1.ConditionStatus) corev1.NodeCondition {
		return corev1.NodeCondition{Type: typ, Status: s}
	}
	pod := func(name string, phase corev1.PodPhase, deleted bool) corev1.Pod {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Status: corev1.PodStatus{Phase: phase}}
		if deleted {
			p.DeletionTimestamp = &metav1.Time{Time: time.Date(2026, 12, 5, 5, 0, 41, 0, time.UTC)}
		}
		return p
	}
	keptOff := pod("kept", corev1.PodPending, false)
	keptOff.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{"n1"}}}}}}}}
	clear := []corev1.NodeCondition{cond(corev1.NodeMemoryPressure, corev1.ConditionFalse), cond(corev1.NodeReady, corev1.ConditionTrue)}
	for _, tc := range []struct {
		name string
		node *corev1.Node
		pods []corev1.Pod
		want string // a part of the reason; "" for calm
	}{
		{"a node without pressure and running pods is calm", node(clear...), []corev1.Pod{pod("a", corev1.PodRunning, false)}, ""},
		{"memory pressure is unrest", node(cond(corev1.NodeMemoryPressure, corev1.ConditionTrue)), nil, "MemoryPressure=True"},
		{"an unknown disk pressure condition is unrest", node(cond(corev1.NodeDiskPressure, corev1.ConditionUnknown)), nil, "DiskPressure=Unknown"},
		{"PID pressure is unrest", node(cond(corev1.NodePIDPressure, corev1.ConditionTrue)), nil, "PIDPressure=True"},
		{"a not-ready node without pressure conditions is calm", node(cond(corev1.NodeReady, corev1.ConditionFalse)), nil, ""},
		{"a pending pod is unrest", node(clear...), []corev1.Pod{pod("a", corev1.PodRunning, false), pod("b", corev1.PodPending, false)}, "ns/b is pending"},
		{"a pod an avoidance keeps off the node is calm", node(clear...), []corev1.Pod{keptOff}, ""},
		{"an evicted pod still running is unrest", node(clear...), []corev1.Pod{pod("fork", corev1.PodRunning, true)}, "ns/fork is terminating (deleted at 05:00:41)"},
		{"a deleted pending pod is unrest", node(clear...), []corev1.Pod{pod("p", corev1.PodPending, true)}, "ns/p is terminating"},
		{"a deleted pod that failed is calm", node(clear...), []corev1.Pod{pod("f", corev1.PodFailed, true)}, ""},
		{"an evicted shell is calm", node(clear...), []corev1.Pod{pod("shell", corev1.PodFailed, false)}, ""},
		{"the first pod not calm is named", node(clear...), []corev1.Pod{pod("x", corev1.PodPending, false), pod("y", corev1.PodRunning, true)}, "ns/x is pending"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Unrest(tc.node, tc.pods)
			if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Unrest = %q, want %q", got, tc.want)
			}
		})
	}
}
