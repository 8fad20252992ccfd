package avoidwebhook

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

const (
	rsUID    = "0b7e6a52-0000-4000-8000-000000000001"
	dsUID    = "0b7e6a52-0000-4000-8000-000000000002"
	otherUID = "0b7e6a52-0000-4000-8000-000000000003"
)

var created = time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)

func notIn(node string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpNotIn, Values: []string{node}}
}

func in(node string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
}

var zone = corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}

func required(terms ...corev1.NodeSelectorTerm) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: terms}}}
}

func fields(rs ...corev1.NodeSelectorRequirement) corev1.NodeSelectorTerm {
	return corev1.NodeSelectorTerm{MatchFields: rs}
}

func pod(kind, uid string, affinity *corev1.Affinity) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "app",
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate,
			Time: ptr.To(metav1.NewTime(created))}}},
		Spec: corev1.PodSpec{Affinity: affinity, Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	if kind != "" {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: "w", UID: types.UID(uid), Controller: ptr.To(true)}}
	}
	return p
}

func param(node string, uids ...string) Param {
	p := Param{Name: "pressure-avoid-" + node, Node: node, HasNode: true, Until: map[string]string{}}
	for _, u := range uids {
		p.Until[u] = "2026-12-01T10:05:00Z"
	}
	return p
}

func TestPatch(t *testing.T) {
	preferred := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
		{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}}}
	podAffinityOnly := &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}}
	withPreferred := preferred.DeepCopy()
	withPreferred.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = required(fields(notIn("node-a"))).NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	expired := param("node-a", rsUID)
	expired.Until[rsUID] = "2026-12-01T10:00:00Z" // the pod's own time: not before it
	malformed := param("node-a", rsUID)
	malformed.Until[rsUID] = "in five minutes"
	noNode := param("node-a", rsUID)
	noNode.HasNode = false
	bound := pod("ReplicaSet", rsUID, nil)
	bound.Spec.NodeName = "node-b"
	noTime := pod("ReplicaSet", rsUID, nil)
	noTime.ManagedFields[0].Time = nil
	noManaged := pod("ReplicaSet", rsUID, nil)
	noManaged.ManagedFields = nil
	notController := pod("ReplicaSet", rsUID, nil)
	notController.OwnerReferences[0].Controller = nil
	cases := []struct {
		name   string
		pod    *corev1.Pod
		params []Param
		want   *corev1.Affinity // nil: no patch
		ops    int
	}{
		{"a listed ReplicaSet's pod without affinity gets a required term avoiding the node",
			pod("ReplicaSet", rsUID, nil), []Param{param("node-a", rsUID)}, required(fields(notIn("node-a"))), 1},
		{"a pod with only pod affinity gets node affinity added beside it",
			pod("StatefulSet", rsUID, podAffinityOnly), []Param{param("node-a", rsUID)},
			&corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{}, NodeAffinity: required(fields(notIn("node-a"))).NodeAffinity}, 1},
		{"preferred node affinity is kept and a required one added",
			pod("ReplicaSet", rsUID, preferred), []Param{param("node-a", rsUID)}, withPreferred, 1},
		{"every existing term gets the exclusion, appended to its fields or added beside its expressions",
			pod("ReplicaSet", rsUID, required(fields(in("node-a")), corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone}})),
			[]Param{param("node-a", rsUID)},
			required(fields(in("node-a"), notIn("node-a")), corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone},
				MatchFields: []corev1.NodeSelectorRequirement{notIn("node-a")}}), 2},
		{"two nodes' avoidances both apply, in the params' order",
			pod("Job", rsUID, nil), []Param{param("node-a", rsUID), param("node-b", rsUID)},
			required(fields(notIn("node-a"), notIn("node-b"))), 2},
		{"only the params listing the controller apply",
			pod("ReplicaSet", rsUID, nil), []Param{param("node-a", otherUID), param("node-b", rsUID)},
			required(fields(notIn("node-b"))), 1},
		{"a DaemonSet's pod is never changed, even when listed", pod("DaemonSet", dsUID, nil), []Param{param("node-a", dsUID)}, nil, 0},
		{"a pod created bound to a node is not changed", bound, []Param{param("node-a", rsUID)}, nil, 0},
		{"a pod of a controller not listed is not changed", pod("ReplicaSet", otherUID, nil), []Param{param("node-a", rsUID)}, nil, 0},
		{"a bare pod is not changed", pod("", "", nil), []Param{param("node-a", rsUID)}, nil, 0},
		{"an owner that is not the controller is not followed", notController, []Param{param("node-a", rsUID)}, nil, 0},
		{"an avoidance ending at the pod's creation changes nothing", pod("ReplicaSet", rsUID, nil), []Param{expired}, nil, 0},
		{"an end that is not RFC 3339 changes nothing", pod("ReplicaSet", rsUID, nil), []Param{malformed}, nil, 0},
		{"a ConfigMap without the node annotation changes nothing", pod("ReplicaSet", rsUID, nil), []Param{noNode}, nil, 0},
		{"a managedFields entry without a time changes nothing", noTime, []Param{param("node-a", rsUID)}, nil, 0},
		{"a pod without managedFields changes nothing", noManaged, []Param{param("node-a", rsUID)}, nil, 0},
		{"no params, no patch", pod("ReplicaSet", rsUID, nil), nil, nil, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.pod.DeepCopy()
			ops := Patch(tc.pod, tc.params)
			if !reflect.DeepEqual(tc.pod, before) {
				t.Fatalf("Patch changed its argument")
			}
			if len(ops) != tc.ops {
				t.Fatalf("%d ops, want %d: %+v", len(ops), tc.ops, ops)
			}
			if tc.want == nil {
				return
			}
			got := applyPatch(t, tc.pod, ops)
			if !reflect.DeepEqual(got.Spec.Affinity, tc.want) {
				t.Errorf("affinity after the patch\n got %+v\nwant %+v", got.Spec.Affinity, tc.want)
			}
			if got.Spec.Containers[0].Name != "c" {
				t.Errorf("the patch changed the containers: %+v", got.Spec.Containers)
			}
		})
	}
}

// applyPatch applies ops to pod's JSON as the API server applies a webhook's patch.
func applyPatch(t *testing.T, pod *corev1.Pod, ops []Op) *corev1.Pod {
	t.Helper()
	doc, err := json.Marshal(pod)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(ops)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonpatch.DecodePatch(raw)
	if err != nil {
		t.Fatal(err)
	}
	out, err := p.Apply(doc)
	if err != nil {
		t.Fatalf("apply %s: %v", raw, err)
	}
	var got corev1.Pod
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	return &got
}
