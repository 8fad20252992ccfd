package deploy

// The avoidance policies of templates/agent-avoidance.yaml on their own: what the
// MutatingAdmissionPolicy changes in a pod, and what an agent token may write (level 1).

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
)

// TestAgentMayWriteOnlyItsOwnNodesAvoidances: with a token bound to its pod on node A, the agent may
// write the avoidance ConfigMap of A, and nothing that would make pods avoid B or change another
// ConfigMap.
func TestAgentMayWriteOnlyItsOwnNodesAvoidances(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp)
	c := admin(t, cp)
	createNode(t, c, "node-a")
	createNode(t, c, "node-b")
	a := tokenClient(t, cp, releaseNS, agentSA, createPod(t, c, releaseNS, "agent-a", "node-a", agentSA))
	unbound := tokenClient(t, cp, releaseNS, agentSA, nil)
	ctx := context.Background()
	uid := "0b7e6a52-2c5c-4a0e-9d6e-1f6f3c2b9a11"
	data := map[string]string{uid: "2026-12-01T10:00:00Z"}
	apply := func(client kubernetes.Interface, name, node string, data map[string]string) error {
		cm := corev1ac.ConfigMap(name, releaseNS).WithLabels(map[string]string{loopbreaker.AvoidanceLabel: "true"}).
			WithAnnotations(map[string]string{loopbreaker.AvoidanceNodeAnnotation: node}).WithData(data)
		_, err := client.CoreV1().ConfigMaps(releaseNS).Apply(ctx, cm, metav1.ApplyOptions{FieldManager: loopbreaker.AvoidanceFieldManager, Force: true})
		return err
	}
	waitFor(t, "avoidance policy in force", 60*time.Second, func() error {
		return errContains(apply(a, avoidPrefix+"node-b", "node-b", data), msgAvoidName)
	})
	params := &loopbreaker.AvoidanceParams{Client: a, Namespace: releaseNS, Prefix: avoidPrefix, Node: "node-a"}
	allowed(t, "agent A publishes A's avoidances (AvoidanceParams)", params.Write(ctx, []policy.Avoidance{
		{Owner: policy.Workload{Kind: "ReplicaSet", Name: "web", UID: uid}, Until: time.Now().Add(time.Minute)}}))
	allowed(t, "agent A empties A's avoidances", params.Write(ctx, nil))
	forbidden(t, "agent A writes B's ConfigMap", apply(a, avoidPrefix+"node-b", "node-b", data), msgAvoidName)
	otherParams := &loopbreaker.AvoidanceParams{Client: a, Namespace: releaseNS, Prefix: avoidPrefix, Node: "node-b"}
	forbidden(t, "agent A publishes avoidances for B (AvoidanceParams)", otherParams.Write(ctx, nil), msgAvoidName)
	forbidden(t, "agent A names node B in its own ConfigMap", apply(a, avoidPrefix+"node-a", "node-b", data), msgAvoidNode)
	forbidden(t, "agent A writes the agent's configuration ConfigMap", apply(a, "pressure-agent", "node-a", data), msgAvoidName)
	forbidden(t, "agent A writes something else than UIDs and times",
		apply(a, avoidPrefix+"node-a", "node-a", map[string]string{"config.yaml": "x"}), msgAvoidData)
	forbidden(t, "unbound agent token writes A's ConfigMap", apply(unbound, avoidPrefix+"node-a", "node-a", data), msgUnbound)
	allowed(t, "cluster admin is not matched by the policy", apply(c, avoidPrefix+"node-b", "node-b", data))

	// The ConfigMap the agent wrote is owned by its Node: a deleted node leaves no avoidance behind.
	if err := c.CoreV1().Nodes().Delete(ctx, "node-a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "node-a's avoidance ConfigMap garbage-collected with the node", 60*time.Second, func() error {
		_, err := c.CoreV1().ConfigMaps(releaseNS).Get(ctx, avoidPrefix+"node-a", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		return fmt.Errorf("configmap still there (err %v)", err)
	})
}

// TestAvoidancePolicyAddsTheNodeToEveryTermOfListedControllersOnly creates pods in dry-run against the
// chart's MutatingAdmissionPolicy with one node's avoidance ConfigMap listing a ReplicaSet and a
// DaemonSet UID.
func TestAvoidancePolicyAddsTheNodeToEveryTermOfListedControllersOnly(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp)
	installAvoidance(t, cp)
	c := admin(t, cp)
	ctx := context.Background()
	const rs, ds, other = "0b7e6a52-0000-4000-8000-000000000001", "0b7e6a52-0000-4000-8000-000000000002", "0b7e6a52-0000-4000-8000-000000000003"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: avoidPrefix + "node-a", Namespace: releaseNS,
		Labels: map[string]string{loopbreaker.AvoidanceLabel: "true"}, Annotations: map[string]string{loopbreaker.AvoidanceNodeAnnotation: "node-a"}},
		Data: map[string]string{rs: "2099-01-01T00:00:00Z", ds: "2099-01-01T00:00:00Z"}}
	if _, err := c.CoreV1().ConfigMaps(releaseNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	owned := func(kind, uid string) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: "w", UID: types.UID(uid), Controller: ptr.To(true)}}
	}
	in := func(node string) corev1.NodeSelectorRequirement {
		return corev1.NodeSelectorRequirement{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}
	}
	zone := corev1.NodeSelectorRequirement{Key: "zone", Operator: corev1.NodeSelectorOpIn, Values: []string{"a", "b"}}
	twoTerms := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{in("node-a")}},
			{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}}}
	preferredOnly := &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
		{Weight: 1, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{zone}}}}}}
	cases := []struct {
		name     string
		owners   []metav1.OwnerReference
		affinity *corev1.Affinity
		nodeName string
		want     []string // nodes excluded by metadata.name NotIn, one entry per term
	}{
		{"a listed ReplicaSet's pod without affinity avoids the node", owned("ReplicaSet", rs), nil, "", []string{"node-a"}},
		{"every existing term gets the exclusion", owned("ReplicaSet", rs), twoTerms, "", []string{"node-a", "node-a"}},
		{"preferred affinity is kept and a required one added", owned("ReplicaSet", rs), preferredOnly, "", []string{"node-a"}},
		{"a DaemonSet's pod is never changed, even when listed", owned("DaemonSet", ds), nil, "", nil},
		{"a pod created bound to a node is not changed", owned("ReplicaSet", rs), nil, "node-b", nil},
		{"a pod of a controller not listed is not changed", owned("ReplicaSet", other), nil, "", nil},
		{"a bare pod is not changed", nil, nil, "", nil},
	}
	waitForAvoidancePolicy(t, c)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec := avoidPodSpec()
			spec.Affinity, spec.NodeName = tc.affinity.DeepCopy(), tc.nodeName
			p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: releaseNS, OwnerReferences: tc.owners}, Spec: spec}
			got, err := c.CoreV1().Pods(releaseNS).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if err != nil {
				t.Fatal(err)
			}
			if a := avoided(*got); !slices.Equal(a, tc.want) {
				t.Errorf("excluded nodes %v, want %v (affinity %+v)", a, tc.want, got.Spec.Affinity)
			}
			if tc.affinity != nil && tc.affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution != nil &&
				len(got.Spec.Affinity.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution) != 1 {
				t.Errorf("preferred terms lost: %+v", got.Spec.Affinity)
			}
			if tc.affinity == twoTerms {
				terms := got.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
				if len(terms[0].MatchFields) != 2 || len(terms[1].MatchExpressions) != 1 {
					t.Errorf("existing requirements changed: %+v", terms)
				}
			}
		})
	}
}
