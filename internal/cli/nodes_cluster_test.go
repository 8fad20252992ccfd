package cli

// Level-1 test of `kubectl pressure nodes` on a real kube-apiserver + etcd with 200 Node objects: 150
// have a stats source of their own (a TLS server the apiserver trusts as the node's kubelet, serving a
// Summary and /configz through the real node proxy), 50 a kubelet that never answers. The real
// kubelet's answer is checked in test/e2e/nodes_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

const (
	nodesTotal = 200
	nodeMemory = 16 << 30
)

// nodeAvailable is node i's memory.available, in an order unrelated to the names.
func nodeAvailable(i int) uint64 { return uint64((i*37)%nodesTotal+1) * 64 << 20 }

// silentNode says whether node i's kubelet never answers.
func silentNode(i int) bool { return i%4 == 3 }

// nodeConfigz is the /configz of every answering node: one hard threshold, memory.available<100Mi.
const nodeConfigz = `{"kubeletconfig":{"evictionHard":{"memory.available":"100Mi"},"enforceNodeAllocatable":[],` +
	`"evictionPressureTransitionPeriod":"5m0s"}}`

// fakeKubelet serves node i's Summary and /configz; a falling node loses 8Mi of memory.available with
// every Summary served, while its stats time advances 10s.
func fakeKubelet(name string, i int) http.Handler {
	fall := uint64(0)
	if fallingNode(i) {
		fall = 8 << 20
	}
	return clustertest.SummaryKubelet(name, nodeMemory, nodeAvailable(i), fall, nodeConfigz)
}

// fallingNode says whether node i's memory.available falls with every Summary.
func fallingNode(i int) bool { return i%8 == 4 }

// controlPlane starts a control plane and returns it with a client and a context for the test.
func controlPlane(t *testing.T, timeout time.Duration) (*cluster.ControlPlane, kubernetes.Interface, context.Context) {
	t.Helper()
	cp := clustertest.ControlPlane(t)
	cs, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	return cp, cs, ctx
}

// createNode registers a Node whose kubelet is at ip:port, with 16Gi of memory and conds.
func createNode(ctx context.Context, t *testing.T, cs kubernetes.Interface, name, ip string, port int,
	conds ...corev1.NodeCondition) {
	t.Helper()
	clustertest.RegisterNode(ctx, t, cs, name, ip, port, nodeMemory, conds...)
}

func TestNodesOrdersManyNodesAndMarksTheSilentOnesPartial(t *testing.T) {
	cp, cs, ctx := controlPlane(t, 5*time.Minute)
	silentIP, silentPort := clustertest.SilentKubelet(t, cp)
	type want struct {
		name  string
		avail uint64
	}
	var answering []want
	var silent []string
	for i := range nodesTotal {
		name := fmt.Sprintf("node-%03d", i)
		if silentNode(i) {
			createNode(ctx, t, cs, name, silentIP, silentPort)
			silent = append(silent, name)
			continue
		}
		ip, port := clustertest.KubeletServer(t, cp, fakeKubelet(name, i))
		createNode(ctx, t, cs, name, ip, port)
		answering = append(answering, want{name, nodeAvailable(i)})
	}
	sort.Slice(answering, func(i, j int) bool { return answering[i].avail < answering[j].avail })
	var wantOrder []string
	for _, w := range answering {
		wantOrder = append(wantOrder, w.name)
	}
	wantOrder = append(wantOrder, silent...) // already by name

	// 50 silent kubelets at 5s each would take 250s asked one after another; the bounded concurrency
	// (32 at once) answers in two rounds of the per-node timeout, ~10s. The bound leaves room for a
	// loaded machine (the per-node timeout is generous for the same reason: the 150 answering nodes
	// must answer within it through a busy apiserver).
	start := time.Now()
	out, err := runCLIWithin(t, 2*time.Minute, "--kubeconfig", cp.Kubeconfig(), "nodes", "-o", "json", "--kubelet-timeout", "5s")
	if err != nil {
		t.Fatalf("nodes: %v", err)
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("nodes took %s for %d nodes, %d of them silent: want well under a minute", took.Round(time.Second), nodesTotal, len(silent))
	} else {
		t.Logf("nodes answered for %d nodes (%d silent, 5s each) in %s", nodesTotal, len(silent), took.Round(100*time.Millisecond))
	}
	var r NodesReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("nodes -o json: %v\n%s", err, out)
	}
	var got []string
	for _, it := range r.Items {
		got = append(got, it.Node)
	}
	if len(got) != nodesTotal || strings.Join(got, " ") != strings.Join(wantOrder, " ") {
		t.Errorf("order of %d nodes:\n got %v\nwant %v", len(got), got, wantOrder)
	}
	if !r.Partial {
		t.Errorf("partial = false, want true: %d kubelets never answer", len(silent))
	}
	for _, it := range r.Items {
		isSilent := it.Error != ""
		if isSilent != strings.Contains(" "+strings.Join(silent, " ")+" ", " "+it.Node+" ") {
			t.Errorf("node %s: error %q, want an error exactly for the silent nodes", it.Node, it.Error)
			continue
		}
		if isSilent && !strings.Contains(it.Error, "no answer within 5s") {
			t.Errorf("node %s: error %q, want it to say no answer within 5s", it.Node, it.Error)
		}
		if !isSilent && (it.Tightest == nil || it.Tightest.Signal != "memory.available" || it.Tightest.Resolved != "104857600") {
			t.Errorf("node %s: tightest %+v, want memory.available against 100Mi", it.Node, it.Tightest)
		}
	}
	first := r.Items[0].Tightest
	if first == nil || first.Available != fmt.Sprint(64<<20) || !first.Met || first.Margin != fmt.Sprint(-36<<20) {
		t.Errorf("tightest node %s: %+v, want 64Mi available, met, margin -36Mi", r.Items[0].Node, first)
	}

	completions, err := runCLI(t, "--kubeconfig", cp.Kubeconfig(), "__complete", "explain", "node-19")
	if err != nil {
		t.Fatalf("completion: %v", err)
	}
	wantCompletion := "node-190\nnode-191\nnode-192\nnode-193\nnode-194\nnode-195\nnode-196\nnode-197\nnode-198\nnode-199\n:4\n"
	if !strings.HasPrefix(completions, wantCompletion) {
		t.Errorf("completion of explain node-19 = %q, want %q", completions, wantCompletion)
	}

	table, err := runCLIWithin(t, 2*time.Minute, "--kubeconfig", cp.Kubeconfig(), "nodes", "--kubelet-timeout", "5s")
	if err != nil {
		t.Fatalf("nodes (table): %v", err)
	}
	lines := strings.Split(strings.TrimSpace(table), "\n")
	if len(lines) != nodesTotal+1 || !strings.HasPrefix(lines[0], "NODE") || !strings.HasPrefix(lines[1], wantOrder[0]+" ") ||
		!strings.Contains(lines[len(lines)-1], "no answer") {
		t.Errorf("table: %d lines, want a header and %d nodes, tightest first, silent last:\n%s", len(lines), nodesTotal, table)
	}

	// A second sample 1s later: the falling nodes' stats advanced 10s and lost 8Mi, so the time to the
	// threshold is margin / (8Mi per 10s); the others are not falling.
	out, err = runCLIWithin(t, 2*time.Minute, "--kubeconfig", cp.Kubeconfig(), "nodes", "-o", "json",
		"--kubelet-timeout", "5s", "--trend", "1s")
	if err != nil {
		t.Fatalf("nodes --trend: %v", err)
	}
	var tr NodesReport
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("nodes --trend -o json: %v\n%s", err, out)
	}
	for _, it := range tr.Items {
		var i int
		if _, err := fmt.Sscanf(it.Node, "node-%d", &i); err != nil || silentNode(i) {
			continue
		}
		want := "not falling"
		if fallingNode(i) {
			margin, _ := strconv.ParseInt(it.Tightest.Margin, 10, 64)
			want = "0s"
			if margin > 0 {
				want = (time.Duration(float64(10*time.Second) * float64(margin) / float64(8<<20))).Round(time.Second).String()
			}
		}
		if it.TimeToThreshold != want {
			t.Errorf("node %s (margin %s): time to threshold %q, want %q", it.Node, it.Tightest.Margin, it.TimeToThreshold, want)
		}
	}
}
