package deploy

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/uninstall"
	"github.com/kube-pressure/pressure/test/cluster"
)

// access is one authorization question: may the ServiceAccount verb group/resource/subresource
// (in namespace, named name)?
type access struct {
	verb, group, resource, subresource, namespace, name string
	allowed                                             bool
}

func (a access) String() string {
	r := a.resource
	if a.group != "" {
		r += "." + a.group
	}
	if a.subresource != "" {
		r += "/" + a.subresource
	}
	return fmt.Sprintf("%s %s ns=%q name=%q", a.verb, r, a.namespace, a.name)
}

// What each component's code calls (allowed) and a sample of what it must not do (denied).
var agentAccess = []access{
	{verb: "list", resource: "pods", allowed: true},
	{verb: "watch", resource: "pods", allowed: true},
	{verb: "delete", resource: "pods", namespace: workload, allowed: true},
	{verb: "create", resource: "pods", subresource: "eviction", namespace: workload, allowed: true},
	{verb: "get", resource: "nodes", name: "node-a", allowed: true},
	{verb: "patch", resource: "nodes", name: "node-a", allowed: true},
	{verb: "create", resource: "events", namespace: workload, allowed: true},
	{verb: "patch", resource: "events", namespace: workload, allowed: true},

	// No single-pod get: the agent reads pods only through its informer (list and watch).
	{verb: "get", resource: "pods", namespace: workload},
	{verb: "create", resource: "pods", namespace: workload},
	{verb: "update", resource: "pods", namespace: workload},
	{verb: "patch", resource: "pods", namespace: workload},
	{verb: "create", resource: "pods", subresource: "exec", namespace: workload},
	{verb: "update", resource: "pods", subresource: "status", namespace: workload},
	{verb: "list", resource: "nodes"},
	{verb: "delete", resource: "nodes", name: "node-a"},
	{verb: "update", resource: "nodes", name: "node-a"},
	{verb: "create", resource: "nodes", subresource: "proxy", name: "node-a"},
	// The kubelet config comes from the host file: no kubelet API at all (nodes/proxy get is exec
	// on every kubelet for a token sent to it directly).
	{verb: "get", resource: "nodes", subresource: "proxy", name: "node-a"},
	{verb: "get", resource: "nodes", subresource: "configz", name: "node-a"},
	{verb: "get", resource: "secrets", namespace: workload},
	{verb: "list", resource: "configmaps"},
	{verb: "delete", resource: "events", namespace: workload},
	{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: releaseNS},
	{verb: "get", group: "apps", resource: "replicasets", namespace: workload},
}

var janitorAccess = []access{
	{verb: "list", resource: "pods", allowed: true},
	{verb: "watch", resource: "pods", allowed: true},
	{verb: "delete", resource: "pods", namespace: workload, allowed: true},
	{verb: "patch", resource: "pods", namespace: workload, allowed: true},
	{verb: "create", resource: "events", namespace: workload, allowed: true},
	{verb: "delete", resource: "events", namespace: workload},
	{verb: "get", group: "apps", resource: "replicasets", namespace: workload, allowed: true},
	{verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: releaseNS, allowed: true},
	{verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: releaseNS, name: "pressure-janitor", allowed: true},
	{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: releaseNS, name: "pressure-janitor", allowed: true},

	{verb: "create", resource: "pods", subresource: "eviction", namespace: workload},
	{verb: "get", resource: "nodes", name: "node-a"},
	{verb: "patch", resource: "nodes", name: "node-a"},
	{verb: "get", resource: "nodes", subresource: "proxy", name: "node-a"},
	{verb: "create", resource: "pods", namespace: workload},
	{verb: "update", resource: "pods", namespace: workload},
	{verb: "get", resource: "secrets", namespace: workload},
	{verb: "get", group: "apps", resource: "deployments", namespace: workload},
	{verb: "delete", group: "apps", resource: "replicasets", namespace: workload},
	{verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: releaseNS, name: "someone-else"},
	{verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: "kube-system", name: "pressure-janitor"},
	{verb: "patch", resource: "events", namespace: workload},
}

// The uninstall hook's identity (agent.uninstallHook): the agent DaemonSet and the nodes' taints only.
var cleanupAccess = []access{
	{verb: "list", resource: "nodes", allowed: true},
	{verb: "get", resource: "nodes", name: "node-a", allowed: true},
	{verb: "patch", resource: "nodes", name: "node-a", allowed: true},
	{verb: "get", group: "apps", resource: "daemonsets", namespace: releaseNS, name: agentSA, allowed: true},
	{verb: "delete", group: "apps", resource: "daemonsets", namespace: releaseNS, name: agentSA, allowed: true},

	{verb: "delete", group: "apps", resource: "daemonsets", namespace: releaseNS, name: "someone-else"},
	{verb: "delete", group: "apps", resource: "daemonsets", namespace: workload, name: agentSA},
	{verb: "list", group: "apps", resource: "daemonsets", namespace: releaseNS},
	{verb: "update", group: "apps", resource: "daemonsets", namespace: releaseNS, name: agentSA},
	{verb: "delete", resource: "nodes", name: "node-a"},
	{verb: "update", resource: "nodes", name: "node-a"},
	{verb: "list", resource: "pods"},
	{verb: "delete", resource: "pods", namespace: workload},
	{verb: "create", resource: "pods", subresource: "eviction", namespace: workload},
	{verb: "get", resource: "secrets", namespace: releaseNS},
	{verb: "get", resource: "nodes", subresource: "proxy", name: "node-a"},
}

// impersonate returns a client acting as the ServiceAccount namespace/name with its groups.
func impersonate(t testing.TB, rc *rest.Config, namespace, name string) kubernetes.Interface {
	t.Helper()
	rc = rest.CopyConfig(rc)
	rc.Impersonate = rest.ImpersonationConfig{
		UserName: "system:serviceaccount:" + namespace + ":" + name,
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	c, err := kubernetes.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEachServiceAccountMayDoWhatItsCodeCallsAndNothingElse(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp)
	for _, tc := range []struct {
		sa    string
		table []access
	}{{agentSA, agentAccess}, {janitorSA, janitorAccess}, {cleanupSA, cleanupAccess}} {
		t.Run(tc.sa, func(t *testing.T) {
			c := impersonate(t, cp.RESTConfig(), releaseNS, tc.sa)
			for _, a := range tc.table {
				r, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(), &authorizationv1.SelfSubjectAccessReview{
					Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
						Verb: a.verb, Group: a.group, Resource: a.resource, Subresource: a.subresource, Namespace: a.namespace, Name: a.name,
					}},
				}, metav1.CreateOptions{})
				if err != nil {
					t.Fatalf("%s: %v", a, err)
				}
				if got := r.Status.Allowed; got != a.allowed {
					t.Errorf("%s may %s: got allowed=%v, want %v (%s)", tc.sa, a, got, a.allowed, r.Status.Reason)
				}
			}
		})
	}
	// What the hook's code calls works with its own token, through the agent's admission policies.
	t.Run(cleanupSA+" runs the cleanup", func(t *testing.T) { runCleanupAsTheHook(t, cp) })
}

func runCleanupAsTheHook(t *testing.T, cp *cluster.ControlPlane) {
	c := admin(t, cp)
	ctx := context.Background()
	other := corev1.Taint{Key: "example.com/dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}
	for name, ts := range map[string][]corev1.Taint{
		"node-a": {other, {Key: loopbreaker.TaintKey, Value: "memory.available", Effect: corev1.TaintEffectNoSchedule}},
		"node-b": {other},
	} {
		if _, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec: corev1.NodeSpec{Taints: ts}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	labels := map[string]string{"app": agentSA}
	ds := &appsv1.DaemonSet{ObjectMeta: metav1.ObjectMeta{Name: agentSA, Namespace: releaseNS}, Spec: appsv1.DaemonSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			NodeSelector: map[string]string{"example.com/no-such-node": "true"},
			Containers:   []corev1.Container{{Name: "agent", Image: "pressure.local/pressure-agent:test"}}}}}}
	if _, err := c.AppsV1().DaemonSets(releaseNS).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	hook := tokenClient(t, cp, releaseNS, cleanupSA, nil)
	r, err := uninstall.Cleaner{Client: hook, Namespace: releaseNS, DaemonSet: agentSA, TaintKey: loopbreaker.TaintKey,
		StopTimeout: time.Minute, Poll: 100 * time.Millisecond, Log: slog.New(slog.DiscardHandler)}.Run(ctx)
	if err != nil {
		t.Fatalf("cleanup with the hook's token: %v", err)
	}
	if !r.Stopped || strings.Join(r.Untainted, ",") != "node-a" {
		t.Errorf("cleanup: %s; want the agents stopped and the taint removed from node-a only", r.Summary(agentSA, loopbreaker.TaintKey))
	}
	n, err := c.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range n.Spec.Taints {
		if tn.Key == loopbreaker.TaintKey {
			t.Errorf("node-a still has %v", tn)
		}
	}
}

func TestJanitorTokenIsRefusedEvictionsAndNodePatchesByTheAPIServer(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp)
	c := admin(t, cp)
	createNode(t, c, "node-a")
	createNamespace(t, cp, workload)
	createPod(t, c, workload, "victim", "node-a", "")
	janitor := tokenClient(t, cp, releaseNS, janitorSA, nil)
	ctx := context.Background()
	err := janitor.PolicyV1().Evictions(workload).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "victim", Namespace: workload}})
	if !apierrors.IsForbidden(err) {
		t.Errorf("janitor eviction: got %v, want Forbidden", err)
	}
	_, err = janitor.CoreV1().Nodes().Patch(ctx, "node-a", types.MergePatchType, []byte(`{"metadata":{"annotations":{"x":"y"}}}`), metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("janitor node patch: got %v, want Forbidden", err)
	}
	// What it needs works with the same token: listing pods.
	if _, err := janitor.CoreV1().Pods("").List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("janitor list pods: %v", err)
	}
}
