package deploy

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// Names the chart gives the components in the test release.
const (
	agentSA   = "pressure-agent"
	janitorSA = "pressure-janitor"
	cleanupSA = "pressure-agent-cleanup" // agent.uninstallHook
	workload  = "workload"
)

// accessKinds are the chart objects the RBAC and admission tests install for real: identities,
// RBAC and the admission policies, not the workloads (no kubelet runs them at level 1).
var accessKinds = map[string]bool{
	"ServiceAccount": true, "ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
}

// installAccess renders the chart with the default values, live (dry-run off: the avoidance rights
// exist only then) and set (helm --set), and applies its access objects.
func installAccess(t testing.TB, cp *cluster.ControlPlane, set ...string) {
	t.Helper()
	var objs []*unstructured.Unstructured
	for _, o := range objects(t, render(t, defaultValues, append([]string{live}, set...)...)) {
		if accessKinds[o.GetKind()] {
			objs = append(objs, o)
		}
	}
	createNamespace(t, cp, releaseNS)
	mustKubectl(t, cp, manifestOf(t, objs), "apply", "--server-side", "--field-manager=pressure-chart-test", "-f", "-")
	waitForBindings(t, cp, objs)
}

// admin returns the cluster-admin clientset.
func admin(t testing.TB, cp *cluster.ControlPlane) kubernetes.Interface {
	t.Helper()
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createNode creates a Node object (no kubelet behind it).
func createNode(t testing.TB, c kubernetes.Interface, name string) {
	t.Helper()
	_, err := c.CoreV1().Nodes().Create(context.Background(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create node %s: %v", name, err)
	}
}

// createPod creates a pod bound to node (it stays Pending: no kubelet runs it).
func createPod(t testing.TB, c kubernetes.Interface, namespace, name, node, serviceAccount string) *corev1.Pod {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			ServiceAccountName:            serviceAccount,
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "c", Image: "pressure.local/pause:v1", ImagePullPolicy: corev1.PullNever}},
		},
	}
	got, err := c.CoreV1().Pods(namespace).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create pod %s/%s on %s: %v", namespace, name, node, err)
	}
	return got
}

// tokenClient mints a token for namespace/sa with the TokenRequest API, bound to pod when pod is
// not nil (the token then carries the pod's node in the extra authentication.kubernetes.io/node-name),
// and returns a clientset that authenticates with it.
func tokenClient(t testing.TB, cp *cluster.ControlPlane, namespace, sa string, pod *corev1.Pod) kubernetes.Interface {
	t.Helper()
	c, err := kubernetes.NewForConfig(tokenConfig(t, cp, namespace, sa, pod))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tokenConfig is tokenClient's *rest.Config.
func tokenConfig(t testing.TB, cp *cluster.ControlPlane, namespace, sa string, pod *corev1.Pod) *rest.Config {
	t.Helper()
	spec := authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}
	if pod != nil {
		spec.BoundObjectRef = &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
	}
	tr, err := admin(t, cp).CoreV1().ServiceAccounts(namespace).CreateToken(context.Background(), sa,
		&authenticationv1.TokenRequest{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token request for %s/%s: %v", namespace, sa, err)
	}
	rc := rest.AnonymousClientConfig(cp.RESTConfig())
	rc.BearerToken = tr.Status.Token
	return rc
}

// whoAmI returns the user the API server sees for c.
func whoAmI(t testing.TB, c kubernetes.Interface) authenticationv1.UserInfo {
	t.Helper()
	r, err := c.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("self subject review: %v", err)
	}
	return r.Status.UserInfo
}

// waitFor polls f every 250ms until it returns nil, failing the test after timeout with the last error.
func waitFor(t testing.TB, what string, timeout time.Duration, f func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// errContains returns nil when err is non-nil and mentions want.
func errContains(err error, want string) error {
	switch {
	case err == nil:
		return errors.New("request succeeded")
	case !strings.Contains(err.Error(), want):
		return err
	}
	return nil
}

// controlPlane starts a control plane for the tests of this package, in a state directory of our
// own prefix (pressure-deploy-): while these tests were written, something on the shared machine
// removed /tmp/pressure-cluster-* directories under running control planes.
func controlPlane(t *testing.T) *cluster.ControlPlane {
	t.Helper()
	helm(t) // skip (or fail in CI) before starting anything when helm is missing
	dir, err := os.MkdirTemp("", "pressure-deploy-")
	if err != nil {
		t.Fatal(err)
	}
	return clustertest.ControlPlane(t, clustertest.WithOptions(func(o *cluster.ControlPlaneOptions) { o.Dir = dir }))
}
