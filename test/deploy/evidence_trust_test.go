package deploy

// Issue 30, finding 4: forged evidence (level 1: the chart's policies on a real kube-apiserver,
// requests with real ServiceAccount tokens).

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	eventsv1 "k8s.io/api/events/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Messages of the Event policies (agent-admissionpolicy.yaml, janitor-evidence-policy.yaml).
const (
	msgOwnEvents = "may only write its own Events"
	msgEvidence  = "only pressure-janitor may write Events named pressure-janitor.*"
)

// TestNobodyButTheJanitorWritesItsEvidenceAndTheAgentChangesOnlyItsOwnEvents: a tenant that may
// create and patch Events in its namespace, and the agent (which may patch Events cluster-wide), try
// to write Events that look like the janitor's evidence or to rewrite other components' Events.
func TestNobodyButTheJanitorWritesItsEvidenceAndTheAgentChangesOnlyItsOwnEvents(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp)
	c := admin(t, cp)
	ctx := context.Background()
	createNode(t, c, "node-a")
	createNode(t, c, "node-b")
	createNamespace(t, cp, workload)
	createSA(t, c, workload, "tenant")
	role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: "events-writer", Namespace: workload},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update", "get"}}}}
	if _, err := c.RbacV1().Roles(workload).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "events-writer", Namespace: workload},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "events-writer"},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "tenant", Namespace: workload}}}
	if _, err := c.RbacV1().RoleBindings(workload).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	tenant := tokenClient(t, cp, workload, "tenant", nil)
	agent := tokenClient(t, cp, releaseNS, agentSA, createPod(t, c, releaseNS, "agent-a", "node-a", agentSA))
	janitorClient := tokenClient(t, cp, releaseNS, janitorSA, nil)

	event := func(name, component, host string) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: workload},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: workload, Name: "web", APIVersion: "v1"},
			Reason:         "EvictedPodDeleted", Message: "test", Type: corev1.EventTypeNormal,
			Source:         corev1.EventSource{Component: component, Host: host},
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
		}
	}
	create := func(cl kubernetes.Interface, e *corev1.Event) error {
		_, err := cl.CoreV1().Events(e.Namespace).Create(ctx, e, metav1.CreateOptions{})
		return err
	}
	patch := func(cl kubernetes.Interface, name, p string) error {
		_, err := cl.CoreV1().Events(workload).Patch(ctx, name, types.MergePatchType, []byte(p), metav1.PatchOptions{})
		return err
	}
	waitFor(t, "evidence policy in force", 60*time.Second, func() error {
		return errContains(create(tenant, event("forged-1", "pressure-janitor", "")), msgEvidence)
	})

	// The janitor's evidence and an Event of the kubelet's, to be attacked.
	own := "pressure-janitor.0f9e8d7c-1111-2222-3333-444455556666"
	allowed(t, "janitor writes its evidence", create(janitorClient, event(own, "pressure-janitor", "")))
	if err := create(c, event("web.kubelet", "kubelet", "node-a")); err != nil {
		t.Fatal(err)
	}

	// A tenant with Event rights in its namespace.
	forbidden(t, "tenant creates an Event with source pressure-janitor", create(tenant, event("forged-2", "pressure-janitor", "")), msgEvidence)
	forbidden(t, "tenant creates an Event under the janitor's name", create(tenant, event("pressure-janitor.aaaa", "tenant", "")), msgEvidence)
	forged := event("forged-3", "tenant", "")
	forged.ReportingController = "pressure-janitor"
	forbidden(t, "tenant creates an Event with reportingComponent pressure-janitor", create(tenant, forged), msgEvidence)
	ev := &eventsv1.Event{ObjectMeta: metav1.ObjectMeta{Name: "forged-4", Namespace: workload}, EventTime: metav1.NewMicroTime(time.Now()),
		ReportingController: "pressure-janitor", ReportingInstance: "x", Action: "Delete", Reason: "EvictedPodDeleted", Type: "Normal",
		Regarding: corev1.ObjectReference{Kind: "Pod", Namespace: workload, Name: "web", APIVersion: "v1"}}
	_, err := tenant.EventsV1().Events(workload).Create(ctx, ev, metav1.CreateOptions{})
	forbidden(t, "tenant creates an events.k8s.io Event with reportingController pressure-janitor", err, msgEvidence)
	forbidden(t, "tenant rewrites the janitor's evidence", patch(tenant, own, `{"message":"forged"}`), msgEvidence)
	forbidden(t, "tenant turns its Event into the janitor's", patch(tenant, "web.kubelet", `{"source":{"component":"pressure-janitor"}}`), msgEvidence)
	allowed(t, "tenant creates an Event of its own with the janitor's reason (why shows it unverified)",
		create(tenant, event("claims", "tenant", "")))

	// The agent on node A: its own Events only.
	allowed(t, "agent A writes its Event", create(agent, event("agent-a.1", "pressure-agent", "node-a")))
	allowed(t, "agent A patches its Event (the recorder's repeat)", patch(agent, "agent-a.1", `{"count":2}`))
	forbiddenByEither(t, "agent A writes an Event as the janitor", create(agent, event("agent-a.2", "pressure-janitor", "node-a")), msgOwnEvents, msgEvidence)
	forbidden(t, "agent A rewrites the kubelet's Event on its node", patch(agent, "web.kubelet",
		`{"message":"forged","source":{"component":"pressure-agent","host":"node-a"},"reportingComponent":"pressure-agent"}`), msgOwnEvents)
	forbiddenByEither(t, "agent A rewrites the janitor's evidence", patch(agent, own,
		`{"message":"forged","source":{"component":"pressure-agent","host":"node-a"}}`), msgOwnEvents, msgEvidence)
	onB := event("agent-a.3", "pressure-agent", "node-a")
	onB.Namespace, onB.InvolvedObject = "default", corev1.ObjectReference{Kind: "Node", Name: "node-b", APIVersion: "v1"}
	forbidden(t, "agent A writes an Event on Node B", create(agent, onB), msgOwnEvents)

	// What was written stays as written.
	got, err := c.CoreV1().Events(workload).Get(ctx, own, metav1.GetOptions{})
	if err != nil || got.Message != "test" || got.Source.Component != "pressure-janitor" {
		t.Errorf("janitor evidence %+v (err %v): changed by someone else", got, err)
	}
}

// forbiddenByEither checks that err is a 403 carrying one of two policies' messages (both policies
// refuse the request; the API server reports the first it evaluated).
func forbiddenByEither(t *testing.T, what string, err error, a, b string) {
	t.Helper()
	if !apierrors.IsForbidden(err) || (errContains(err, a) != nil && errContains(err, b) != nil) {
		t.Errorf("%s: got %v, want Forbidden with %q or %q", what, err, a, b)
	}
}
