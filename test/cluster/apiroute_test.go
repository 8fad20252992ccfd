package cluster_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/images"
)

// TestPodsReachTheAPIServerThroughTheKubernetesService is level 2: a pod's network namespace has
// a default route to the bridge, and HTTPS to the kubernetes Service IP (10.0.0.1:443) reaches
// the API server, whose certificate verifies for that address; Stop removes the DNAT rule.
func TestPodsReachTheAPIServerThroughTheKubernetesService(t *testing.T) {
	if p := clustertest.NodeProblem(); p != "" {
		clustertest.SkipOrFail(t, "level-2 node unavailable: %s", p)
	}
	cp := clustertest.ControlPlane(t)
	node := clustertest.Node(t, cp, cluster.NodeOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "net", Namespace: "default"},
		Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "c", Image: images.PauseName, ImagePullPolicy: corev1.PullNever}},
		},
	}
	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var ip string
	for ip == "" {
		p, err := c.CoreV1().Pods("default").Get(ctx, "net", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.Status.Phase == corev1.PodRunning {
			ip = p.Status.PodIP
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("pod not Running: phase %s", p.Status.Phase)
		case <-time.After(500 * time.Millisecond):
		}
	}
	netns := podNetns(t, ip)
	routes, err := exec.Command("ip", "netns", "exec", netns, "ip", "route").CombinedOutput()
	if err != nil {
		t.Fatalf("ip route in %s: %v: %s", netns, err, routes)
	}
	if want := "default via " + node.IP().String(); !strings.Contains(string(routes), want) {
		t.Errorf("routes of the pod:\n%s\nwant a line with %q", routes, want)
	}
	ca := filepath.Join(cp.Dir(), "pki", "ca.crt")
	out, err := exec.Command("ip", "netns", "exec", netns, "curl", "-sS", "--max-time", "10", "--cacert", ca,
		"https://10.0.0.1:443/version").CombinedOutput()
	if err != nil {
		t.Fatalf("curl https://10.0.0.1/version from the pod's netns %s: %v: %s", netns, err, out)
	}
	if !strings.Contains(string(out), `"gitVersion": "v1.36.3`) {
		t.Errorf("/version from the pod: %s, want gitVersion v1.36.3", out)
	}
	route := node.Cleanup().APIRoute
	if route == nil {
		t.Fatal("node cleanup records no API route")
	}
	if err := node.Stop(); err != nil {
		t.Fatal(err)
	}
	rules, err := exec.Command("iptables", "-w", "-t", "nat", "-S", "PREROUTING").CombinedOutput()
	if err != nil {
		t.Fatalf("iptables -S: %v: %s", err, rules)
	}
	if strings.Contains(string(rules), route.Target) {
		t.Errorf("DNAT rule to %s left after Stop:\n%s", route.Target, rules)
	}
}

// podNetns finds the CNI network namespace holding ip.
func podNetns(t *testing.T, ip string) string {
	t.Helper()
	entries, err := os.ReadDir("/run/netns")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		out, err := exec.Command("ip", "netns", "exec", e.Name(), "ip", "-4", "-o", "addr").CombinedOutput()
		if err == nil && strings.Contains(string(out), " "+ip+"/") {
			return e.Name()
		}
	}
	t.Fatalf("no network namespace in /run/netns holds %s", ip)
	return ""
}
