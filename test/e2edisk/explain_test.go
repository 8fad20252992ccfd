package e2edisk

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/kube-pressure/pressure/internal/cli"
)

// explainReport is the part of `kubectl pressure explain -o json` this test reads.
type explainReport struct {
	Kubelet struct {
		EvictionOrder []struct{ Pod string } `json:"evictionOrder"`
	} `json:"kubelet"`
	Pressure *struct {
		ThresholdsMet []string `json:"thresholdsMet"`
		Victims       []struct{ Pod, Frees string }
	} `json:"pressure"`
	Warnings []string `json:"warnings"`
}

// explainLocal runs `kubectl pressure explain --local` on the package node, as an operator would on it:
// the node's kubelet config file, its kubelet root dir, containerd's root and podLogsDir, the agent's
// defaults (the agent of startAgent differs only in its sync period).
func explainLocal(ctx context.Context, t *testing.T, e *env) (explainReport, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	streams := genericiooptions.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	args := []string{"explain", "--local", "-o", "json", "--kubeconfig", e.cp.Kubeconfig(), "--node-name", e.node.Name(),
		"--kubelet-config", e.node.KubeletConfigPath(), "--kubelet-root-dir", e.node.KubeletRootDir(),
		"--runtime-root", e.node.ContainerdRoot(), "--pod-logs-dir", e.node.PodLogsDir()}
	if err := cli.Run(ctx, streams, args); err != nil {
		t.Fatalf("explain --local: %v\n%s", err, errOut.String())
	}
	var r explainReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("explain output is not JSON: %v\n%s", err, out.String())
	}
	return r, out.String()
}

// waitSettled waits until nodefs is below below and has not moved by more than 1 MiB for 2 s (the writer
// reached its target and holds), and returns what is available then.
func waitSettled(ctx context.Context, t *testing.T, e *env, below int64) int64 {
	t.Helper()
	last, since := int64(-1), time.Now()
	for {
		if ctx.Err() != nil {
			t.Fatalf("nodefs did not settle below %d bytes (last %d)", below, last)
		}
		a, _ := nodefs(t, e)
		if last < 0 || a-last > 1<<20 || last-a > 1<<20 {
			last, since = a, time.Now()
		}
		if a < below && time.Since(since) >= 2*time.Second {
			return a
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// explain on the node predicts the victim the agent then evicts. A writer takes nodefs to about 12.5%
// available, below the agent's threshold (15%) and above the kubelet's (10%), and holds; no agent runs
// yet. `kubectl pressure explain --local`, reading the node as the agent does (statfs, the pods' volumes
// and logs), names the agent's victim; then the agent starts and must evict exactly that pod, and no
// other. Explain and the agent disagreeing fails the test, whichever pod each names.
func TestExplainOnTheNodePredictsTheVictimTheAgentEvicts(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := namespace(ctx, t, e, "disk-explain")
	for _, n := range []string{"small-a", "small-b"} {
		if _, err := e.client.CoreV1().Pods(ns).Create(ctx, writerPod(ns, n, "0", "16Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitState(ctx, t, e, ns, "running", "small-a", "small-b")
	time.Sleep(2 * time.Second)           // the neighbours' 16 MiB are written
	waitSettled(ctx, t, e, math.MaxInt64) // nothing else (an earlier test's cleanup) still moves nodefs
	avail0, capacity := nodefs(t, e)
	agentAt, kubeletAt := capacity*15/100, capacity*10/100
	fill := avail0 - capacity*125/1000
	t.Logf("nodefs: %d of %d bytes available; agent threshold about %d, kubelet's %d; the writer writes %d", avail0, capacity,
		agentAt, kubeletAt, fill)
	if _, err := e.client.CoreV1().Pods(ns).Create(ctx, writerPod(ns, "writer", "8Mi", strconv.FormatInt(fill, 10)),
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	settled := waitSettled(ctx, t, e, agentAt)
	r, out := explainLocal(ctx, t, e)
	explained := time.Now()
	var predicted []string
	if r.Pressure != nil {
		for _, v := range r.Pressure.Victims {
			predicted = append(predicted, v.Pod)
		}
	}
	var kubeletOrder []string
	for _, v := range r.Kubelet.EvictionOrder {
		kubeletOrder = append(kubeletOrder, v.Pod)
	}
	t.Logf("nodefs settled at %d bytes available; explain: agent victims %v, kubelet's order if its threshold were met %v, warnings %q",
		settled, predicted, kubeletOrder, r.Warnings)
	if len(predicted) != 1 {
		t.Fatalf("explain predicts agent victims %v, want exactly one\n%s", predicted, out)
	}
	startAgent(t, e)
	victim := waitAnyEvicted(ctx, t, e, ns, "writer", "small-a", "small-b")
	t.Logf("the agent evicted %s %s after explain ran", victim, time.Since(explained).Round(100*time.Millisecond))
	time.Sleep(5 * time.Second) // a second eviction would come within a few 1 s syncs
	agentEvictions, kubeletEvictions := evictions(ctx, t, e, ns)
	if want := strings.TrimPrefix(predicted[0], ns+"/"); !onlyRequest(agentEvictions, want) {
		t.Errorf("explain predicted %s; the agent's eviction requests %v (kubelet evictions %v)", predicted[0], agentEvictions, kubeletEvictions)
	}
	if predicted[0] != ns+"/writer" {
		t.Errorf("explain and the agent name %s, want %s/writer (the pod using the most disk)", predicted[0], ns)
	}
}

// waitAnyEvicted waits until one of the pods is terminating, gone or failed, and returns its name.
func waitAnyEvicted(ctx context.Context, t *testing.T, e *env, ns string, names ...string) string {
	t.Helper()
	for {
		for _, n := range names {
			if s := podState(ctx, e, ns, n); s == "terminating" || s == "gone" || strings.HasPrefix(s, "Failed") {
				return n
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("none of %v was evicted", names)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
