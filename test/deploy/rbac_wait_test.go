package deploy

import (
	"context"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kube-pressure/pressure/test/cluster"
)

// rbacWait bounds how long installAccess waits for the authorizer to see the chart's bindings.
const rbacWait = time.Minute

// waitForBindings waits until the API server's authorizer grants, for every ServiceAccount subject
// of every RoleBinding and ClusterRoleBinding in objs, the first rule of the role it binds (when
// that role is in objs too). RBAC is served from informer caches, so a test that applies the chart's
// RBAC and then asks as one of its ServiceAccounts would otherwise race the cache.
func waitForBindings(t testing.TB, cp *cluster.ControlPlane, objs []*unstructured.Unstructured) {
	t.Helper()
	rules := map[string]rbacv1.PolicyRule{} // "Kind/namespace/name" of a role: its first rule
	var bindings []rbacv1.RoleBinding
	for _, o := range objs {
		switch o.GetKind() {
		case "Role", "ClusterRole":
			var r rbacv1.Role // a ClusterRole's fields that matter here are the same
			fromUnstructured(t, o, &r)
			if len(r.Rules) > 0 {
				rules[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = r.Rules[0]
			}
		case "RoleBinding", "ClusterRoleBinding":
			var b rbacv1.RoleBinding
			fromUnstructured(t, o, &b)
			bindings = append(bindings, b)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), rbacWait)
	defer cancel()
	for _, b := range bindings {
		roleNS := b.Namespace
		if b.RoleRef.Kind == "ClusterRole" {
			roleNS = ""
		}
		rule, ok := rules[b.RoleRef.Kind+"/"+roleNS+"/"+b.RoleRef.Name]
		if !ok {
			continue // a built-in role: nothing of the chart's to wait for
		}
		attrs, ok := firstRequest(rule, b.Namespace)
		if !ok {
			continue
		}
		for _, s := range b.Subjects {
			if s.Kind != rbacv1.ServiceAccountKind {
				continue
			}
			if err := cp.WaitUntilAllowed(ctx, cluster.ServiceAccountSubject(s.Namespace, s.Name), attrs); err != nil {
				t.Fatalf("binding %s/%s: %v", b.Namespace, b.Name, err)
			}
		}
	}
}

// firstRequest is one request rule allows, in namespace ("" for a cluster-wide binding): its first
// verb, API group, resource (a "resource/subresource" split) and resource name. False when the rule
// is about non-resource URLs or uses wildcards.
func firstRequest(rule rbacv1.PolicyRule, namespace string) (authorizationv1.ResourceAttributes, bool) {
	if len(rule.Verbs) == 0 || len(rule.APIGroups) == 0 || len(rule.Resources) == 0 ||
		rule.Verbs[0] == "*" || rule.APIGroups[0] == "*" || strings.Contains(rule.Resources[0], "*") {
		return authorizationv1.ResourceAttributes{}, false
	}
	resource, sub, _ := strings.Cut(rule.Resources[0], "/")
	a := authorizationv1.ResourceAttributes{Verb: rule.Verbs[0], Group: rule.APIGroups[0], Resource: resource, Subresource: sub, Namespace: namespace}
	if len(rule.ResourceNames) > 0 {
		a.Name = rule.ResourceNames[0]
	}
	return a, true
}

// fromUnstructured converts a rendered chart object to its typed form.
func fromUnstructured(t testing.TB, o *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into); err != nil {
		t.Fatalf("%s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
	}
}
