package soak

import (
	"encoding/json"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/avoidwebhook"
)

func TestKeptOff(t *testing.T) {
	pending := func(mut func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending}}
		if mut != nil {
			mut(p)
		}
		return p
	}
	notIn := func(node string) corev1.NodeSelectorTerm {
		return corev1.NodeSelectorTerm{MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{node}}}}
	}
	affinity := func(terms ...corev1.NodeSelectorTerm) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
				RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
		}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"a pending pod without affinity is not kept off", pending(nil), false},
		{"a pending pod whose only term excludes the node is kept off", pending(affinity(notIn("n1"))), true},
		{"a pending pod excluded from another node is not kept off", pending(affinity(notIn("n2"))), false},
		{"a pod with one term that allows the node is not kept off", pending(affinity(notIn("n1"), corev1.NodeSelectorTerm{})), false},
		{"a running pod is not kept off", pending(func(p *corev1.Pod) { affinity(notIn("n1"))(p); p.Status.Phase = corev1.PodRunning }), false},
		{"a bound pending pod is not kept off", pending(func(p *corev1.Pod) { affinity(notIn("n1"))(p); p.Spec.NodeName = "n1" }), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := KeptOff(tc.pod, "n1"); got != tc.want {
				t.Errorf("KeptOff = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestTheAvoidancePatchKeepsAPodOff checks KeptOff against the avoidance policy's own patch
// (avoidwebhook.Patch, applied as the API server applies it): a ReplicaSet's pod the policy patched for
// node n1, with and without an affinity of its own, is kept off n1.
func TestTheAvoidancePatchKeepsAPodOff(t *testing.T) {
	zone := corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a"}}}}
	for _, tc := range []struct {
		name     string
		affinity *corev1.Affinity
	}{
		{"a pod without affinity", nil},
		{"a pod with a zone term", &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{zone}}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const uid = "0b7e6a52-0000-4000-8000-000000000001"
			created := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "app",
				OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "w", UID: types.UID(uid), Controller: ptr.To(true)}},
				ManagedFields:   []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Time: ptr.To(metav1.NewTime(created))}}},
				Spec:   corev1.PodSpec{Affinity: tc.affinity, Containers: []corev1.Container{{Name: "c", Image: "i"}}},
				Status: corev1.PodStatus{Phase: corev1.PodPending}}
			if KeptOff(p, "n1") {
				t.Fatal("the pod is kept off before the patch")
			}
			ops := avoidwebhook.Patch(p, []avoidwebhook.Param{{Name: "pressure-avoid-n1", Node: "n1", HasNode: true,
				Until: map[string]string{uid: created.Add(5 * time.Minute).Format(time.RFC3339)}}})
			if len(ops) == 0 {
				t.Fatal("the avoidance policy did not patch the pod")
			}
			doc, err := json.Marshal(p)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := json.Marshal(ops)
			if err != nil {
				t.Fatal(err)
			}
			patch, err := jsonpatch.DecodePatch(raw)
			if err != nil {
				t.Fatal(err)
			}
			out, err := patch.Apply(doc)
			if err != nil {
				t.Fatalf("apply %s: %v", raw, err)
			}
			var patched corev1.Pod
			if err := json.Unmarshal(out, &patched); err != nil {
				t.Fatal(err)
			}
			if !KeptOff(&patched, "n1") || KeptOff(&patched, "n2") {
				t.Errorf("patched pod's affinity %+v: want kept off n1 and not n2", patched.Spec.Affinity)
			}
		})
	}
}
