package cli

// Level-1 tests on a real kube-apiserver + etcd (test/cluster): there is no kubelet, so the node proxy
// cannot serve the Summary or /configz. These tests check what the apiserver alone decides: a missing
// node, and a registered node whose kubelet does not answer, are errors naming the endpoint, and no
// partial snapshot is written. The snapshot and explain of a real node are in test/e2e/explain_test.go.

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

func TestLiveCommandsNameTheEndpointWhenTheKubeletDoesNotAnswer(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	cs, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: "ghost"},
		Status: corev1.NodeStatus{
			Capacity:        corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("16Gi")},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.0.2.1"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		},
	}
	created, err := cs.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created.Status = node.Status
	if _, err := cs.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	kubeconfig := []string{"--kubeconfig", cp.Kubeconfig(), "--request-timeout", "5s"}

	dir := filepath.Join(t.TempDir(), "snap")
	_, err = runCLI(t, append(kubeconfig, "snapshot", "ghost", "--out", dir)...)
	if err == nil || !strings.Contains(err.Error(), "GET /api/v1/nodes/ghost/proxy/stats/summary") {
		t.Errorf("snapshot of a node without kubelet: error %v, want one naming the summary endpoint", err)
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("snapshot wrote %s although it failed (stat: %v)", dir, statErr)
	}
	_, err = runCLI(t, append(kubeconfig, "explain", "ghost")...)
	if err == nil || !strings.Contains(err.Error(), "GET /api/v1/nodes/ghost/proxy/stats/summary") {
		t.Errorf("explain of a node without kubelet: error %v, want one naming the summary endpoint", err)
	}
	_, err = runCLI(t, append(kubeconfig, "explain", "nowhere")...)
	if err == nil || !strings.Contains(err.Error(), `get node nowhere: nodes "nowhere" not found`) {
		t.Errorf("explain of a missing node: error %v, want one naming the node", err)
	}
}
