package deploy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-pressure/pressure/internal/actuate"
)

const nodeNameExtra = "authentication.kubernetes.io/node-name"

// Messages of the chart's policies (agent-admissionpolicy.yaml, janitor-admissionpolicy.yaml).
const (
	msgEvict   = "may only evict pods bound to that node"
	msgDelete  = "may only delete pods bound to that node"
	msgNode    = "may only change Node"
	msgNodeFld = "may change only its taint pressure.kube-pressure.io/evicting and the annotation pressure.kube-pressure.io/ledger of Node"
	msgProxy   = "may only read /configz of Node"
	msgEvents  = "may only write Events with source.host"
	msgUnbound = "must use a ServiceAccount token bound to a pod on a node"
	msgRunning = "may only delete terminal pods"
	msgAnnot   = "may only change the pod annotation pressure.kube-pressure.io/terminal-since"
	msgAnnotRn = "may only annotate terminal pods"
	msgEvOwn   = "may only create its own evidence Events"
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

// patchNode writes the eviction ledger annotation of Node name, as the agent does.
func patchNode(c kubernetes.Interface, name string) error {
	return mergePatchNode(c, name, `{"metadata":{"annotations":{"pressure.kube-pressure.io/ledger":"{\"entries\":[]}"}}}`)
}

func mergePatchNode(c kubernetes.Interface, name, patch string) error {
	_, err := c.CoreV1().Nodes().Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

// rawGet sends GET path exactly as given (client-go's request builder cleans "..", so it cannot
// send what an attacker can) with rc's credentials, and returns the status code and body.
func rawGet(t *testing.T, rc *rest.Config, path string) (int, string) {
	t.Helper()
	hc, err := rest.HTTPClientFor(rc)
	if err != nil {
		t.Fatal(err)
	}
	hc.Timeout = 10 * time.Second
	req, err := http.NewRequest(http.MethodGet, strings.TrimSuffix(rc.Host, "/")+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if req.URL.Path != path && req.URL.RawPath != path && req.URL.EscapedPath() != path {
		t.Fatalf("request path %q (raw %q), want %q sent as is", req.URL.Path, req.URL.RawPath, path)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(body)
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
	rawA := tokenConfig(t, cp, releaseNS, agentSA, agentA)

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
		allowed(t, "agent A writes the ledger annotation of Node A", patchNode(a, "node-a"))
		forbidden(t, "agent A patches Node B", patchNode(a, "node-b"), msgNode)
		allowed(t, "agent B patches Node B", patchNode(b, "node-b"))
		forbidden(t, "agent B patches Node A", patchNode(b, "node-a"), msgNode)
		forbidden(t, "unbound agent token patches Node A", patchNode(unbound, "node-a"), msgUnbound)
	})
	t.Run("node fields other than the taint and the ledger", func(t *testing.T) {
		allowed(t, "agent A adds its taint to Node A", mergePatchNode(a, "node-a",
			`{"spec":{"taints":[{"key":"pressure.kube-pressure.io/evicting","value":"memory.available","effect":"NoSchedule"}]}}`))
		allowed(t, "agent A removes its taint from Node A", mergePatchNode(a, "node-a", `{"spec":{"taints":[]}}`))
		for _, tc := range []struct{ what, patch string }{
			{"adds a label", `{"metadata":{"labels":{"node-role.kubernetes.io/control-plane":""}}}`},
			{"adds another annotation", `{"metadata":{"annotations":{"example.com/x":"y"}}}`},
			{"cordons it", `{"spec":{"unschedulable":true}}`},
			{"adds another taint", `{"spec":{"taints":[{"key":"example.com/other","effect":"NoExecute"}]}}`},
			{"adds its taint key with effect NoExecute", `{"spec":{"taints":[{"key":"pressure.kube-pressure.io/evicting","effect":"NoExecute"}]}}`},
			{"sets the provider ID", `{"spec":{"providerID":"aws:///x"}}`},
			{"adds a finalizer", `{"metadata":{"finalizers":["example.com/hold"]}}`},
		} {
			forbidden(t, "agent A "+tc.what+" of Node A", mergePatchNode(a, "node-a", tc.patch), msgNodeFld)
		}
		// A label set by someone else stays, and the agent may still write its own fields.
		if err := mergePatchNode(c, "node-a", `{"metadata":{"labels":{"team":"a"},"annotations":{"example.com/x":"y"}},"spec":{"taints":[{"key":"example.com/other","effect":"NoSchedule"}]}}`); err != nil {
			t.Fatal(err)
		}
		allowed(t, "agent A adds its taint next to another one", mergePatchNode(a, "node-a",
			`{"spec":{"taints":[{"key":"example.com/other","effect":"NoSchedule"},{"key":"pressure.kube-pressure.io/evicting","value":"memory.available","effect":"NoSchedule"}]}}`))
		forbidden(t, "agent A removes the other taint", mergePatchNode(a, "node-a",
			`{"spec":{"taints":[{"key":"pressure.kube-pressure.io/evicting","value":"memory.available","effect":"NoSchedule"}]}}`), msgNodeFld)
		forbidden(t, "agent A removes another annotation", mergePatchNode(a, "node-a", `{"metadata":{"annotations":{"example.com/x":null}}}`), msgNodeFld)
		allowed(t, "agent A removes the ledger annotation", mergePatchNode(a, "node-a", `{"metadata":{"annotations":{"pressure.kube-pressure.io/ledger":null}}}`))
	})
	t.Run("no kubelet API", func(t *testing.T) {
		// Default kubeletConfig.source=file: RBAC grants no nodes/proxy, so even the own node's
		// /configz, and a raw path with "..", are refused before admission.
		for _, p := range []string{"configz", "pods"} {
			if err := proxy(a, "node-a", p); !apierrors.IsForbidden(err) {
				t.Errorf("agent A reads /%s of Node A through the proxy: got %v, want Forbidden", p, err)
			}
		}
		code, body := rawGet(t, rawA, "/api/v1/nodes/node-a/proxy/configz/../pods")
		if code != http.StatusForbidden {
			t.Errorf("raw GET .../proxy/configz/../pods: status %d, want 403: %s", code, body)
		}
	})
	t.Run("events", func(t *testing.T) {
		allowed(t, "agent A writes an Event from node-a", createEvent(a, "node-a"))
		forbidden(t, "agent A writes an Event claiming node-b", createEvent(a, "node-b"), msgEvents)
		// The preflight's Event, written directly (not through the recorder) by an agent about to exit.
		allowed(t, "agent A writes its KubeletConfigNotFound Event on Node node-a", actuate.WriteNodeEvent(context.Background(), a,
			"node-a", actuate.ReasonKubeletConfigNotFound, "test", time.Now()))
		forbidden(t, "agent A writes a KubeletConfigNotFound Event on Node node-b", actuate.WriteNodeEvent(context.Background(), a,
			"node-b", actuate.ReasonKubeletConfigNotFound, "test", time.Now()), msgEvents)
	})
}

// TestAgentNodeProxyOptInReadsExactlyConfigzOfItsOwnNode is kubeletConfig.source=nodeProxy: the
// policy admits exactly /configz of the agent's node. The API server does not clean the proxy path,
// so "configz/../pods" must be refused (the proxy would clean it and reach the kubelet's /pods).
func TestAgentNodeProxyOptInReadsExactlyConfigzOfItsOwnNode(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp, "agent.kubeletConfig.source=nodeProxy")
	c := admin(t, cp)
	createNode(t, c, "node-a")
	createNode(t, c, "node-b")
	agentA := createPod(t, c, releaseNS, "agent-a", "node-a", agentSA)
	a := tokenClient(t, cp, releaseNS, agentSA, agentA)
	rc := tokenConfig(t, cp, releaseNS, agentSA, agentA)
	waitFor(t, "own-node policy in force", 60*time.Second, func() error { return errContains(proxy(a, "node-b", "configz"), msgProxy) })

	forbidden(t, "agent A reads /configz of Node B", proxy(a, "node-b", "configz"), msgProxy)
	forbidden(t, "agent A reads /pods of Node A", proxy(a, "node-a", "pods"), msgProxy)
	forbidden(t, "agent A reads /configz/x of Node A", proxy(a, "node-a", "configz/x"), msgProxy)
	for _, p := range []string{"/api/v1/nodes/node-a/proxy/configz/../pods", "/api/v1/nodes/node-a/proxy/configz/../exec/ns/pod/c",
		"/api/v1/nodes/node-a/proxy/configz/%2e%2e/pods"} {
		code, body := rawGet(t, rc, p)
		if code != http.StatusForbidden || !strings.Contains(body, msgProxy) {
			t.Errorf("raw GET %s: status %d, want 403 with %q: %s", p, code, msgProxy, body)
		}
	}
	// No kubelet behind node-a: the request passes admission and then fails to connect.
	err := proxy(a, "node-a", "configz")
	if err == nil || apierrors.IsForbidden(err) {
		t.Errorf("agent A reads /configz of Node A: got %v, want admitted (then a connection error: no kubelet)", err)
	}
	t.Logf("agent A reads /configz of Node A: admitted, then (no kubelet behind it): %v", err)
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
	since := fmt.Sprintf(`{"metadata":{"annotations":{"pressure.kube-pressure.io/terminal-since":%q}}}`, time.Now().UTC().Format(time.RFC3339))
	forbidden(t, "janitor annotates a Pending pod", patch("running", since), msgAnnotRn)
	forbidden(t, "janitor sets an owner reference on a Pending pod (garbage collection)", patch("running",
		`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"gone","uid":"0f9e8d7c-1111-2222-3333-444455556666"}]}}`), msgAnnotRn)
	forbidden(t, "janitor changes a label", patch("evicted", `{"metadata":{"labels":{"app":"other"}}}`), msgAnnot)
	forbidden(t, "janitor sets an owner reference", patch("evicted",
		`{"metadata":{"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"gone","uid":"0f9e8d7c-1111-2222-3333-444455556666"}]}}`), msgAnnot)
	forbidden(t, "janitor adds a finalizer", patch("evicted", `{"metadata":{"finalizers":["example.com/hold"]}}`), msgAnnot)
	forbidden(t, "janitor adds another annotation", patch("evicted", `{"metadata":{"annotations":{"example.com/x":"y"}}}`), msgAnnot)
	allowed(t, "janitor adds its first-seen annotation", patch("evicted", since))
	allowed(t, "janitor deletes the Evicted pod", deletePod(j, "evicted", false))
}

func TestJanitorMayCreateOnlyItsOwnEvidenceEventsAndDeleteNone(t *testing.T) {
	cp := controlPlane(t)
	installAccess(t, cp)
	c := admin(t, cp)
	createNamespace(t, cp, workload)
	j := tokenClient(t, cp, releaseNS, janitorSA, nil)
	ctx := context.Background()
	event := func(name, component string) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Name: name, Namespace: workload},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: workload, Name: "web", APIVersion: "v1"},
			Reason:         "EvictedPodDeleted", Message: "test", Type: corev1.EventTypeNormal,
			Source:         corev1.EventSource{Component: component},
			FirstTimestamp: metav1.Now(), LastTimestamp: metav1.Now(), Count: 1,
		}
	}
	create := func(cl kubernetes.Interface, name, component string) error {
		_, err := cl.CoreV1().Events(workload).Create(ctx, event(name, component), metav1.CreateOptions{})
		return err
	}
	del := func(name string) error { return j.CoreV1().Events(workload).Delete(ctx, name, metav1.DeleteOptions{}) }
	own := "pressure-janitor.0f9e8d7c-1111-2222-3333-444455556666"
	waitFor(t, "janitor policy in force", 60*time.Second, func() error { return errContains(create(j, "kubelet.1", "kubelet"), msgEvOwn) })

	forbidden(t, "janitor creates an Event named like another component's", create(j, "web.17a", "pressure-janitor"), msgEvOwn)
	forbidden(t, "janitor creates an Event claiming another source", create(j, "pressure-janitor.x", "kubelet"), msgEvOwn)
	allowed(t, "janitor creates its evidence Event", create(j, own, "pressure-janitor"))
	if err := create(c, "web.17b", "kubelet"); err != nil {
		t.Fatal(err)
	}
	// RBAC grants no Event delete at all: the janitor writes its evidence after the deletions and
	// never takes an Event back, so neither the kubelet's nor its own can be removed.
	for _, name := range []string{"web.17b", own} {
		if err := del(name); !apierrors.IsForbidden(err) {
			t.Errorf("janitor deletes Event %s: got %v, want Forbidden", name, err)
		}
	}
}
