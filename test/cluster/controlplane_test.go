package cluster_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

func TestServiceAccountWithNarrowRoleIsRefusedEverythingElse(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		if _, err := admin.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create namespace %s: %v", ns, err)
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "victim", Namespace: ns},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "pressure.local/pause:v1"}}},
		}
		if _, err := admin.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod in %s: %v", ns, err)
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "reader", Namespace: "team-a"}}
	if _, err := admin.CoreV1().ServiceAccounts("team-a").Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "pod-reader", Namespace: "team-a"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list"}}},
	}
	if _, err := admin.RbacV1().Roles("team-a").Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "reader-reads-pods", Namespace: "team-a"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "pod-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: "reader", Namespace: "team-a"}},
	}
	if _, err := admin.RbacV1().RoleBindings("team-a").Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The authorizer reads bindings from a cache: wait until it has this one (CI once listed 403 here).
	if err := cp.WaitUntilAllowed(ctx, cluster.ServiceAccountSubject("team-a", "reader"),
		authorizationv1.ResourceAttributes{Verb: "list", Resource: "pods", Namespace: "team-a"}); err != nil {
		t.Fatal(err)
	}

	path, cfg, err := cp.ServiceAccountKubeconfig(ctx, "team-a", "reader", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	// The kubeconfig file must work on its own, as it would for kubectl or a shell binary.
	fileCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	if fileCfg.BearerToken != cfg.BearerToken || cfg.BearerToken == "" {
		t.Fatalf("kubeconfig %s token differs from the returned config or is empty", path)
	}
	sac, err := kubernetes.NewForConfig(fileCfg)
	if err != nil {
		t.Fatal(err)
	}

	pods, err := sac.CoreV1().Pods("team-a").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list pods in team-a as reader: got %v, want allowed", err)
	}
	if got, want := len(pods.Items), 1; got != want {
		t.Errorf("pods listed in team-a: got %d, want %d", got, want)
	}
	if _, err := sac.CoreV1().Pods("team-a").Get(ctx, "victim", metav1.GetOptions{}); err != nil {
		t.Errorf("get pod team-a/victim as reader: got %v, want allowed", err)
	}

	refused := map[string]error{}
	_, refused["list pods in team-b"] = sac.CoreV1().Pods("team-b").List(ctx, metav1.ListOptions{})
	refused["delete pod team-a/victim"] = sac.CoreV1().Pods("team-a").Delete(ctx, "victim", metav1.DeleteOptions{})
	_, refused["list nodes"] = sac.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	for what, err := range refused {
		if !apierrors.IsForbidden(err) {
			t.Errorf("%s as reader: got %v, want 403 Forbidden", what, err)
		}
	}
	if _, err := admin.CoreV1().Pods("team-a").Get(ctx, "victim", metav1.GetOptions{}); err != nil {
		t.Errorf("pod team-a/victim after refused delete: %v", err)
	}
}

func TestClientsRecoverAfterAPIServerRestartOnTheSamePort(t *testing.T) {
	cp := clustertest.ControlPlane(t, clustertest.WithTerminatedPodGCThreshold(5))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	admin, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "survivor", Namespace: "default"}}
	if _, err := admin.CoreV1().ConfigMaps("default").Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stopAt := time.Now()
	if err := cp.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver stopped in %s", time.Since(stopAt).Round(time.Millisecond))
	if _, err := admin.CoreV1().ConfigMaps("default").Get(ctx, "survivor", metav1.GetOptions{}); err == nil {
		t.Fatal("get configmap while the apiserver is stopped: got success, want an error")
	}
	startAt := time.Now()
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver ready again in %s", time.Since(startAt).Round(time.Millisecond))
	if _, err := admin.CoreV1().ConfigMaps("default").Get(ctx, "survivor", metav1.GetOptions{}); err != nil {
		t.Fatalf("get configmap after restart (etcd kept the data): %v", err)
	}
	// The controller manager was started with the configured pod GC threshold.
	for _, p := range cp.Processes() {
		if p.Name != "kube-controller-manager" {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(cmdline), "--terminated-pod-gc-threshold=5\x00") {
			t.Errorf("kube-controller-manager cmdline %q lacks --terminated-pod-gc-threshold=5", cmdline)
		}
	}
}

func TestStopLeavesNoProcessBehind(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	procs := cp.Processes()
	if got, want := len(procs), 4; got != want {
		t.Fatalf("processes: got %d, want %d", got, want)
	}
	if err := cp.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, p := range procs {
		if _, err := os.Stat("/proc/" + strconv.Itoa(p.PID)); err == nil && p.Alive() {
			t.Errorf("%s (pid %d) still alive after Stop", p.Name, p.PID)
		}
	}
}
