package deploy

// Issue 30, finding 3: who may write avoidance parameters, and an expired avoidance (level 1: the
// chart's policies on a real kube-apiserver, requests with real ServiceAccount tokens).

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/test/cluster"
)

// msgAvoidWriters is the message of the chart's avoidance-writers policy.
const msgAvoidWriters = "may write avoidance ConfigMaps"

// grantEdit binds the built-in ClusterRole edit (ConfigMaps, Events, pods...) in namespace to a
// subject: what a tenant or an operator of that namespace typically holds.
// It returns once the authorizer grants the subject the right to create ConfigMaps there.
func grantEdit(t *testing.T, cp *cluster.ControlPlane, namespace, name string, subject rbacv1.Subject) {
	t.Helper()
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "edit"},
		Subjects: []rbacv1.Subject{subject}}
	ctx, cancel := context.WithTimeout(context.Background(), rbacWait)
	defer cancel()
	if _, err := admin(t, cp).RbacV1().RoleBindings(namespace).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	who := cluster.Subject{User: "rbac-probe", Groups: []string{subject.Name, "system:authenticated"}}
	if subject.Kind == rbacv1.ServiceAccountKind {
		who = cluster.ServiceAccountSubject(subject.Namespace, subject.Name)
	}
	if err := cp.WaitUntilAllowed(ctx, who, authorizationv1.ResourceAttributes{Verb: "create", Resource: "configmaps", Namespace: namespace}); err != nil {
		t.Fatal(err)
	}
}

// createSA creates ServiceAccount namespace/name.
func createSA(t *testing.T, c kubernetes.Interface, namespace, name string) {
	t.Helper()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}}
	if _, err := c.CoreV1().ServiceAccounts(namespace).Create(context.Background(), sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// avoidanceCM is an avoidance ConfigMap of node, listing owners until the given times.
func avoidanceCM(namespace, name, node string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace,
		Labels: map[string]string{loopbreaker.AvoidanceLabel: "true"}, Annotations: map[string]string{loopbreaker.AvoidanceNodeAnnotation: node}},
		Data: data}
}

// avoidedBy returns the nodes a dry-run pod of a ReplicaSet with UID owner, created in namespace,
// is made to avoid (an error while the namespace's default ServiceAccount is not there yet).
func avoidedBy(c kubernetes.Interface, namespace, owner string) ([]string, error) {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "probe", Namespace: namespace, OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "w", UID: types.UID(owner), Controller: ptr.To(true)}}}, Spec: avoidPodSpec()}
	got, err := c.CoreV1().Pods(namespace).Create(context.Background(), p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return nil, err
	}
	a := avoided(*got)
	slices.Sort(a)
	return a, nil
}

// wantAvoided waits until a dry-run pod of owner in namespace avoids exactly want.
func wantAvoided(t *testing.T, c kubernetes.Interface, what, namespace, owner string, want []string) {
	t.Helper()
	waitFor(t, what, 30*time.Second, func() error {
		got, err := avoidedBy(c, namespace, owner)
		if err != nil {
			return err
		}
		if !slices.Equal(got, want) {
			return fmt.Errorf("excluded nodes %v, want %v", got, want)
		}
		return nil
	})
}

// TestOnlyAgentsAndAdminsMayWriteAvoidancesAndOthersAreIgnored: raw requests with an agent token, a
// tenant's token (edit in the release namespace) and the token of another namespace's ConfigMap
// writer, each refused where issue 30 says it must be; an operator in agent.avoidance.adminGroups and
// system:masters may write avoidances.
func TestOnlyAgentsAndAdminsMayWriteAvoidancesAndOthersAreIgnored(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp, "agent.avoidance.adminGroups={pressure-operators}")
	installAvoidance(t, cp)
	c := admin(t, cp)
	ctx := context.Background()
	createNode(t, c, "node-a")
	createNode(t, c, "node-b")
	const other = "other-team"
	createNamespace(t, cp, other)
	createSA(t, c, releaseNS, "tenant")
	grantEdit(t, cp, releaseNS, "tenant-edit", rbacv1.Subject{Kind: "ServiceAccount", Name: "tenant", Namespace: releaseNS})
	createSA(t, c, other, "writer")
	grantEdit(t, cp, other, "writer-edit", rbacv1.Subject{Kind: "ServiceAccount", Name: "writer", Namespace: other})
	grantEdit(t, cp, releaseNS, "operators-edit", rbacv1.Subject{Kind: "Group", Name: "pressure-operators", APIGroup: rbacv1.GroupName})

	agent := tokenClient(t, cp, releaseNS, agentSA, createPod(t, c, releaseNS, "agent-a", "node-a", agentSA))
	tenant := tokenClient(t, cp, releaseNS, "tenant", nil)
	writer := tokenClient(t, cp, other, "writer", nil)
	rc := rest.CopyConfig(cp.RESTConfig())
	rc.Impersonate = rest.ImpersonationConfig{UserName: "ops", Groups: []string{"pressure-operators", "system:authenticated"}}
	operator, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}

	const hog = "0b7e6a52-0000-4000-8000-0000000000aa"
	future := map[string]string{hog: time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}
	create := func(cl kubernetes.Interface, cm *corev1.ConfigMap) error {
		_, err := cl.CoreV1().ConfigMaps(cm.Namespace).Create(ctx, cm, metav1.CreateOptions{})
		return err
	}
	patch := func(cl kubernetes.Interface, name, p string) error {
		_, err := cl.CoreV1().ConfigMaps(releaseNS).Patch(ctx, name, types.MergePatchType, []byte(p), metav1.PatchOptions{})
		return err
	}
	waitFor(t, "avoidance-writers policy in force", 60*time.Second, func() error {
		return errContains(create(tenant, avoidanceCM(releaseNS, avoidPrefix+"node-b", "node-b", future)), msgAvoidWriters)
	})

	// The agent: its own node's ConfigMap only (the own-avoidance policy), nothing else of the namespace.
	allowed(t, "agent A writes A's avoidances", create(agent, avoidanceCM(releaseNS, avoidPrefix+"node-a", "node-a", future)))
	forbidden(t, "agent A writes B's avoidances", create(agent, avoidanceCM(releaseNS, avoidPrefix+"node-b", "node-b", future)), msgAvoidName)
	forbidden(t, "agent A writes another ConfigMap (the daemons' configuration)",
		create(agent, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "pressure-janitor-x", Namespace: releaseNS}}), msgAvoidName)

	// A tenant that may write ConfigMaps in the release namespace: no avoidance, in any way.
	forbidden(t, "tenant creates an avoidance", create(tenant, avoidanceCM(releaseNS, "mine", "node-b", future)), msgAvoidWriters)
	forbidden(t, "tenant creates an unlabelled ConfigMap under the avoidance prefix",
		create(tenant, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: avoidPrefix + "node-c", Namespace: releaseNS}}), msgAvoidWriters)
	forbidden(t, "tenant changes agent A's avoidances", patch(tenant, avoidPrefix+"node-a", `{"data":{"`+hog+`":"2099-01-01T00:00:00Z"}}`), msgAvoidWriters)
	forbidden(t, "tenant removes the label of agent A's avoidances", patch(tenant, avoidPrefix+"node-a",
		`{"metadata":{"labels":{"`+loopbreaker.AvoidanceLabel+`":null}}}`), msgAvoidWriters)
	allowed(t, "tenant creates an ordinary ConfigMap", create(tenant, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: releaseNS}}))
	forbidden(t, "tenant labels its ConfigMap as an avoidance", patch(tenant, "plain",
		`{"metadata":{"labels":{"`+loopbreaker.AvoidanceLabel+`":"true"},"annotations":{"`+loopbreaker.AvoidanceNodeAnnotation+`":"node-b"}},"data":{"`+hog+`":"2099-01-01T00:00:00Z"}}`), msgAvoidWriters)

	// Another namespace's ConfigMap writer: nothing in the release namespace (RBAC), and its own
	// labelled ConfigMap is no parameter of the policy.
	if err := create(writer, avoidanceCM(releaseNS, "theirs", "node-b", future)); !apierrors.IsForbidden(err) {
		t.Errorf("other namespace's writer creates an avoidance in %s: got %v, want Forbidden", releaseNS, err)
	}
	allowed(t, "other namespace's writer creates a labelled ConfigMap in its own namespace",
		create(writer, avoidanceCM(other, avoidPrefix+"node-w", "node-w", future)))

	// Cluster administrators: system:masters and agent.avoidance.adminGroups.
	allowed(t, "an operator of adminGroups writes an avoidance", create(operator, avoidanceCM(releaseNS, avoidPrefix+"ops", "node-b", future)))
	allowed(t, "system:masters changes an avoidance", patch(c, avoidPrefix+"ops", `{"data":{"`+hog+`":"2099-01-01T00:00:00Z"}}`))

	// What the policy then does with the hog's new pods, in either namespace: it avoids A (the agent)
	// and B (the operator), and nothing the other namespace's writer wrote (node-w).
	for _, ns := range []string{releaseNS, other} {
		wantAvoided(t, c, "pods of the hog in "+ns+" avoid node-a (agent) and node-b (operator), not node-w", ns, hog, []string{"node-a", "node-b"})
	}
}

// TestAnExpiredAvoidanceChangesNoPod: no agent runs to remove the entry; the policy itself compares
// the avoidance's end with the request's time.
func TestAnExpiredAvoidanceChangesNoPod(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp)
	installAvoidance(t, cp)
	c := admin(t, cp)
	const expired, current = "0b7e6a52-0000-4000-8000-0000000000e1", "0b7e6a52-0000-4000-8000-0000000000e2"
	now := time.Now().UTC()
	cm := avoidanceCM(releaseNS, avoidPrefix+"node-a", "node-a", map[string]string{
		expired: now.Add(-time.Minute).Format(time.RFC3339), current: now.Add(time.Hour).Format(time.RFC3339)})
	if _, err := c.CoreV1().ConfigMaps(releaseNS).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	wantAvoided(t, c, "the current avoidance applies", releaseNS, current, []string{"node-a"})
	got, err := avoidedBy(c, releaseNS, expired)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("a pod of an owner whose avoidance ended a minute ago excludes %v, want nothing", got)
	}
}

// TestWithoutAdmissionPoliciesTheAvoidanceFeatureAndItsConfigMapRightsAreOff: without the policies
// nothing confines who writes avoidances, and the agent's token could write any ConfigMap of the
// release namespace (the daemons' configuration included). So nothing of the feature is rendered.
func TestWithoutAdmissionPoliciesTheAvoidanceFeatureAndItsConfigMapRightsAreOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		set  []string
		want bool
	}{
		{"default", nil, true},
		{"admission policies off", []string{"agent.admissionPolicy.enabled=false"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := objects(t, render(t, defaultValues, append([]string{live}, tc.set...)...))
			var got []string
			for _, o := range objs {
				if k := o.GetKind(); k == "Role" || k == "RoleBinding" || k == "MutatingAdmissionPolicy" || k == "ValidatingAdmissionPolicy" {
					if n := o.GetName(); n == "pressure-agent-avoidance" || n == "pressure-agent-avoid-evicted-node" ||
						n == "pressure-agent-own-avoidance" || n == "pressure-agent-avoidance-writers" {
						got = append(got, k+"/"+n)
					}
				}
			}
			if want := map[bool]int{true: 5, false: 0}[tc.want]; len(got) != want {
				t.Errorf("avoidance objects %v, want %d", got, want)
			}
			cfg := configFile(t, objs, "pressure-agent")
			if has := strings.Contains(cfg, "avoidanceNamespace"); has != tc.want {
				t.Errorf("agent configuration names an avoidance namespace: %v, want %v\n%s", has, tc.want, cfg)
			}
		})
	}
}
