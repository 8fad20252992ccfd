package deploy

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

const nodeNameExtra = "authentication.kubernetes.io/node-name"

// Messages of the chart's policies (agent-admissionpolicy.yaml, janitor-admissionpolicy.yaml).
const (
	msgEvict   = "may only evict pods bound to that node"
	msgDelete  = "may only delete pods bound to that node"
	msgNode    = "may only change Node"
	msgProxy   = "may only read /configz of Node"
	msgEvents  = "may only write Events with source.host"
	msgUnbound = "must use a ServiceAccount token bound to a pod on a node"
	msgRunning = "may only delete terminal pods"
	msgAnnot   = "may only change pod annotations"
)

func evict(c kubernetes.Interface, name string, dryRun bool) error {
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: workload}}
	if dryRun {
		ev.DeleteOptions = &metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}}
	}
	return c.PolicyV1().Evictions(workload).Evict(context.Background(), ev)
}

func deletePod(c kubernetes.Interface, name string, dryRun bool) error {
	opts := metav1.DeleteOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	return c.CoreV1().Pods(workload).Delete(context.Background(), name, opts)
}

func patchNode(c kubernetes.Interface, name string) error {
	_, err := c.CoreV1().Nodes().Patch(context.Background(), name, types.MergePatchType,
		[]byte(`{"metadata":{"annotations":{"pressure.kube-pressure.io/test":"patched"}}}`), metav1.PatchOptions{})
	return err
}

// proxy GETs /api/v1/nodes/<node>/proxy/<path>; the error carries the response body (the API
// server's proxy errors are not always a Status its client decodes).
func proxy(c kubernetes.Interface, node, path string) error {
	body, err := c.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", node, "proxy", path).Timeout(10 * time.Second).DoRaw(context.Background())
	if err != nil {
		return fmt.Errorf("%w: %s", err, body)
	}
	return nil
}

func createEvent(c kubernetes.Interface, host string) error {
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: "pressure-test.", Namespace: workload},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: workload, Name: "victim-a", APIVersion: "v1"},
		Reason:         "PressureEviction", Message: "test", Type: corev1.EventTypeWarning,
		Source:         corev1.EventSource{Component: "pressure-agent", Host: host},
		FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
	}
	_, err := c.CoreV1().Events(workload).Create(context.Background(), ev, metav1.CreateOptions{})
	return err
}

// forbidden checks that err is a 403 carrying the policy message want.
func forbidden(t *testing.T, what string, err error, want string) {
	t.Helper()
	if !apierrors.IsForbidden(err) {
		t.Errorf("%s: got %v, want Forbidden (%s)", what, err, want)
		return
	}
	if e := errContains(err, want); e != nil {
		t.Errorf("%s: got %v, want the policy message %q", what, err, want)
	}
}

func allowed(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// TestAgentTokenBoundToAPodOnNodeAMayActOnlyOnNodeA is the admission policy test of issue 8: with a
// ServiceAccount token bound to the agent pod on node A (the kubelet mounts exactly such a token),
// the agent may evict and delete pods on A and patch Node A, and is refused all of it on B.
func TestAgentTokenBoundToAPodOnNodeAMayActOnlyOnNodeA(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp)
	c := admin(t, cp)
	createNode(t, c, "node-a")
	createNode(t, c, "node-b")
	createNamespace(t, cp, workload)
	agentA := createPod(t, c, releaseNS, "agent-a", "node-a", agentSA)
	agentB := createPod(t, c, releaseNS, "agent-b", "node-b", agentSA)
	for _, p := range []struct{ name, node string }{
		{"victim-a", "node-a"}, {"victim-a2", "node-a"}, {"victim-a3", "node-a"},
		{"victim-b", "node-b"}, {"victim-b2", "node-b"}, {"victim-b3", "node-b"},
	} {
		createPod(t, c, workload, p.name, p.node, "")
	}
	a := tokenClient(t, cp, releaseNS, agentSA, agentA)
	b := tokenClient(t, cp, releaseNS, agentSA, agentB)
	unbound := tokenClient(t, cp, releaseNS, agentSA, nil)

	for client, node := range map[kubernetes.Interface]string{a: "node-a", b: "node-b"} {
		u := whoAmI(t, client)
		if got := u.Extra[nodeNameExtra]; len(got) != 1 || got[0] != node {
			t.Fatalf("token bound to the agent pod on %s: user %s has extra %s=%v; the API server does not put the node in pod-bound tokens",
				node, u.Username, nodeNameExtra, got)
		}
	}
	// The API server loads new policies (and the pod parameters) asynchronously: wait until a
	// dry-run eviction on the wrong node is refused. Dry run: nothing is evicted while waiting.
	waitFor(t, "eviction policy in force", 60*time.Second, func() error { return errContains(evict(a, "victim-b", true), msgEvict) })
	waitFor(t, "own-node policy in force", 60*time.Second, func() error { return errContains(deletePod(a, "victim-b", true), msgDelete) })

	t.Run("evictions", func(t *testing.T) {
		forbidden(t, "agent A evicts a pod on B", evict(a, "victim-b", false), msgEvict)
		forbidden(t, "agent B evicts a pod on A", evict(b, "victim-a", false), msgEvict)
		allowed(t, "agent A evicts a pod on A", evict(a, "victim-a", false))
		allowed(t, "agent B evicts a pod on B", evict(b, "victim-b", false))
		forbidden(t, "unbound agent token evicts", evict(unbound, "victim-a2", true), msgUnbound)
		allowed(t, "cluster admin is not matched by the policy", evict(c, "victim-b2", true))
	})
	t.Run("deletions", func(t *testing.T) {
		forbidden(t, "agent A deletes a pod on B", deletePod(a, "victim-b2", false), msgDelete)
		allowed(t, "agent A deletes a pod on A", deletePod(a, "victim-a2", false))
		forbidden(t, "unbound agent token deletes", deletePod(unbound, "victim-a3", true), msgUnbound)
	})
	t.Run("nodes", func(t *testing.T) {
		allowed(t, "agent A patches Node A", patchNode(a, "node-a"))
		forbidden(t, "agent A patches Node B", patchNode(a, "node-b"), msgNode)
		allowed(t, "agent B patches Node B", patchNode(b, "node-b"))
		forbidden(t, "agent B patches Node A", patchNode(b, "node-a"), msgNode)
		forbidden(t, "unbound agent token patches Node A", patchNode(unbound, "node-a"), msgUnbound)
	})
	t.Run("node proxy", func(t *testing.T) {
		forbidden(t, "agent A reads /configz of Node B", proxy(a, "node-b", "configz"), msgProxy)
		forbidden(t, "agent A reads /pods of Node A", proxy(a, "node-a", "pods"), msgProxy)
		// No kubelet behind node-a: the request passes admission and then fails to connect.
		err := proxy(a, "node-a", "configz")
		if err == nil || apierrors.IsForbidden(err) {
			t.Errorf("agent A reads /configz of Node A: got %v, want admitted (then a connection error: no kubelet)", err)
		}
		t.Logf("agent A reads /configz of Node A: admitted, then (no kubelet behind it): %v", err)
	})
	t.Run("events", func(t *testing.T) {
		allowed(t, "agent A writes an Event from node-a", createEvent(a, "node-a"))
		forbidden(t, "agent A writes an Event claiming node-b", createEvent(a, "node-b"), msgEvents)
	})
}

func TestJanitorMayDeleteOnlyTerminalPodsAndChangeOnlyAnnotations(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp)
	c := admin(t, cp)
	createNode(t, c, "node-a")
	createNamespace(t, cp, workload)
	createPod(t, c, workload, "running", "node-a", "")
	evicted := createPod(t, c, workload, "evicted", "node-a", "")
	evicted.Status.Phase = corev1.PodFailed
	evicted.Status.Reason = "Evicted"
	if _, err := c.CoreV1().Pods(workload).UpdateStatus(context.Background(), evicted, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("mark pod evicted: %v", err)
	}
	j := tokenClient(t, cp, releaseNS, janitorSA, nil)
	waitFor(t, "janitor policy in force", 60*time.Second, func() error { return errContains(deletePod(j, "running", true), msgRunning) })

	forbidden(t, "janitor deletes a Pending pod", deletePod(j, "running", false), msgRunning)
	patch := func(name, body string) error {
		_, err := j.CoreV1().Pods(workload).Patch(context.Background(), name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
		return err
	}
	forbidden(t, "janitor changes a label", patch("evicted", `{"metadata":{"labels":{"app":"other"}}}`), msgAnnot)
	allowed(t, "janitor adds its first-seen annotation",
		patch("evicted", fmt.Sprintf(`{"metadata":{"annotations":{"pressure.kube-pressure.io/terminal-since":%q}}}`, time.Now().UTC().Format(time.RFC3339))))
	allowed(t, "janitor deletes the Evicted pod", deletePod(j, "evicted", false))
}
