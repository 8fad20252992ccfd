package cli

// Level-1 tests on a real kube-apiserver + etcd (test/cluster): there is no kubelet, only a silent one
// (clustertest.SilentKubelet: accepts, never answers). A missing node is an error naming it; for a node whose
// kubelet does not answer, snapshot fails within the default kubelet timeout naming the endpoint and
// writes nothing, and explain answers from the Node object alone with a note saying so. The snapshot
// and explain of a real node are in test/e2e/explain_test.go.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

func TestLiveCommandsDoNotWaitForeverForAKubeletThatDoesNotAnswer(t *testing.T) {
	cp, cs, ctx := controlPlane(t, 2*time.Minute)
	ip, port := clustertest.SilentKubelet(t, cp)
	createNode(ctx, t, cs, "ghost", ip, port, corev1.NodeCondition{Type: corev1.NodeMemoryPressure,
		Status: corev1.ConditionFalse, Reason: "KubeletHasSufficientMemory", LastHeartbeatTime: metav1.Now(),
		LastTransitionTime: metav1.Now()})
	kubeconfig := []string{"--kubeconfig", cp.Kubeconfig()}

	// No --request-timeout and no --kubelet-timeout: the default bound must end the wait.
	dir := filepath.Join(t.TempDir(), "snap")
	_, err := runCLIWithin(t, time.Minute, append(kubeconfig, "snapshot", "ghost", "--out", dir)...)
	if err == nil || !strings.Contains(err.Error(), "GET /api/v1/nodes/ghost/proxy/stats/summary") {
		t.Errorf("snapshot of a node without kubelet: error %v, want one naming the summary endpoint", err)
	}
	if _, statErr := os.Stat(dir); !os.IsNotExist(statErr) {
		t.Errorf("snapshot wrote %s although it failed (stat: %v)", dir, statErr)
	}
	out, err := runCLIWithin(t, time.Minute, append(kubeconfig, "explain", "ghost", "-o", "json")...)
	if err != nil {
		t.Fatalf("explain of a node without kubelet: %v, want a partial report from the Node object", err)
	}
	var r struct {
		Allocatable map[string]string `json:"allocatable"`
		Signals     []struct {
			Signal   string
			Observed bool
		} `json:"signals"`
		NodeConditions []struct{ Type, Status string } `json:"nodeConditions"`
		Unavailable    []string                        `json:"unavailable"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("explain -o json: %v\n%s", err, out)
	}
	partial := strings.Join(r.Unavailable, "\n")
	for _, want := range []string{"GET /api/v1/nodes/ghost/proxy/stats/summary (the kubelet, through the apiserver's node proxy)",
		"GET /api/v1/nodes/ghost/proxy/configz", "no stats: no signal is observed",
		"kubelet configuration unknown: thresholds and reservations are the kubelet v1.37 defaults"} {
		if !strings.Contains(partial, want) {
			t.Errorf("unavailable %q does not say %q", r.Unavailable, want)
		}
	}
	// 16Gi − the default hard eviction reservation 100Mi.
	if got, want := r.Allocatable["memory"], "17075011584"; got != want {
		t.Errorf("allocatable memory from the node's capacity = %s, want %s", got, want)
	}
	for _, s := range r.Signals {
		if s.Observed {
			t.Errorf("signal %s observed, want nothing observed without the kubelet", s.Signal)
		}
	}
	if len(r.NodeConditions) != 1 || r.NodeConditions[0].Type != "MemoryPressure" {
		t.Errorf("node conditions %+v, want the MemoryPressure condition the Node carries", r.NodeConditions)
	}
	text, err := runCLIWithin(t, time.Minute, append(kubeconfig, "explain", "ghost", "--kubelet-timeout", "2s")...)
	if err != nil || !strings.Contains(text, "PARTIAL: not everything could be read") {
		t.Errorf("explain ghost (text): error %v, want a PARTIAL section:\n%s", err, text)
	}
	_, err = runCLI(t, append(kubeconfig, "explain", "nowhere")...)
	if err == nil || !strings.Contains(err.Error(), `get node nowhere: nodes "nowhere" not found`) {
		t.Errorf("explain of a missing node: error %v, want one naming the node", err)
	}
}

// runCLIWithin runs the CLI and fails the test if it has not returned within limit (a hang, not a
// speed check: the command's own bound is far below it).
func runCLIWithin(t *testing.T, limit time.Duration, args ...string) (string, error) {
	t.Helper()
	type result struct {
		out string
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := runCLI(t, args...)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-time.After(limit):
		t.Fatalf("kubectl-pressure %v still running after %s", args, limit)
		return "", nil
	}
}
