package e2e

// `kubectl pressure nodes` on the package's cluster: the real node (the real kubelet's Summary and
// /configz through the apiserver's node proxy) among 40 Node objects with a stats source each (32
// test kubelets serving a Summary, 8 that never answer). The 200-node case with trends is a level-1
// test in internal/cli/nodes_cluster_test.go.

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/cli"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

func TestNodesShowsTheRealNodeAmongManyTightestFirst(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const (
		fakes    = 40
		capacity = 16 << 30
		configz  = `{"kubeletconfig":{"evictionHard":{"memory.available":"100Mi"},"enforceNodeAllocatable":[],` +
			`"evictionPressureTransitionPeriod":"5m0s"}}`
	)
	silentIP, silentPort := clustertest.SilentKubelet(t, e.cp)
	served := map[string]uint64{} // memory.available of each answering test node
	silent := map[string]bool{}
	for i := range fakes {
		name := fmt.Sprintf("e2e-nodes-%02d", i)
		t.Cleanup(func() {
			if err := e.client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("delete test node %s: %v", name, err)
			}
		})
		if i%5 == 4 {
			clustertest.RegisterNode(ctx, t, e.client, name, silentIP, silentPort, capacity)
			silent[name] = true
			continue
		}
		// From 1.25% to 98.75% of capacity available: the real node's tightest margin falls among them.
		avail := uint64(capacity) / (2 * fakes) * uint64(2*i+1)
		ip, port := clustertest.KubeletServer(t, e.cp, clustertest.SummaryKubelet(name, capacity, avail, 0, configz))
		clustertest.RegisterNode(ctx, t, e.client, name, ip, port, capacity)
		served[name] = avail
	}

	start := time.Now()
	out, err := kubectlPressure(ctx, t, e, "nodes", "-o", "json", "--kubelet-timeout", "5s")
	if err != nil {
		t.Fatalf("nodes: %v", err)
	}
	t.Logf("nodes answered for %d nodes (%d silent) in %s", fakes+1, len(silent), time.Since(start).Round(100*time.Millisecond))
	var r cli.NodesReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("nodes -o json: %v\n%s", err, out)
	}
	if len(r.Items) != fakes+1 || !r.Partial {
		t.Fatalf("nodes: %d items, partial %v; want %d, partial (%d silent):\n%s", len(r.Items), r.Partial, fakes+1, len(silent), out)
	}
	place := -1
	for i, it := range r.Items {
		switch {
		case silent[it.Node]:
			if it.Error == "" || it.Tightest != nil || i < len(r.Items)-len(silent) {
				t.Errorf("silent node %s at %d: %+v, want an error and a place among the last %d", it.Node, i, it, len(silent))
			}
			continue
		case it.Node == e.node.Name():
			place = i
		case served[it.Node] == 0:
			t.Errorf("unexpected node %s in the answer", it.Node)
			continue
		}
		m := it.Tightest
		if it.Error != "" || m == nil {
			t.Errorf("node %s: error %q, tightest %v; want an answer", it.Node, it.Error, m)
			continue
		}
		if i > 0 && r.Items[i-1].Tightest != nil && r.Items[i-1].Tightest.PercentOfCapacity > m.PercentOfCapacity {
			t.Errorf("node %s (%.1f%% of capacity) after %s (%.1f%%): want tightest first", it.Node, m.PercentOfCapacity,
				r.Items[i-1].Node, r.Items[i-1].Tightest.PercentOfCapacity)
		}
		if want, ok := served[it.Node]; ok && (m.Signal != "memory.available" || m.Available != fmt.Sprint(want) || m.Resolved != "104857600") {
			t.Errorf("test node %s: tightest %+v, want memory.available %d against 100Mi", it.Node, m, want)
		}
	}
	if place < 0 {
		t.Fatalf("the real node %s is not in the answer:\n%s", e.node.Name(), out)
	}
	m := r.Items[place].Tightest
	if m == nil {
		t.Fatalf("node %s: no tightest margin, want one from the real kubelet's Summary", e.node.Name())
	}
	t.Logf("real node %s: %s available %s of %s, threshold %s (margin %.1f%% of capacity), place %d of %d", e.node.Name(),
		m.Signal, m.Available, m.Capacity, m.Resolved, m.PercentOfCapacity, place+1, len(r.Items))
	avail, err1 := strconv.ParseInt(m.Available, 10, 64)
	resolved, err2 := strconv.ParseInt(m.Resolved, 10, 64)
	margin, err3 := strconv.ParseInt(m.Margin, 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || avail <= 0 || margin != avail-resolved {
		t.Errorf("tightest %+v: want exact amounts with margin = available − threshold", m)
	}
	// The explain of the same node must agree on that signal's threshold.
	rep := explainJSON(ctx, t, e, e.node.Name())
	found := false
	for _, s := range rep.Signals {
		found = found || (s.Signal == m.Signal && s.Threshold == m.Resolved)
	}
	if !found {
		t.Errorf("tightest signal %s with threshold %s is not among explain's signals %+v", m.Signal, m.Resolved, rep.Signals)
	}

	table, err := kubectlPressure(ctx, t, e, "nodes", "--kubelet-timeout", "5s")
	if err != nil {
		t.Fatalf("nodes (table): %v", err)
	}
	if !strings.Contains(table, e.node.Name()+" ") || !strings.HasPrefix(table, "NODE") {
		t.Errorf("table lacks the real node %s:\n%s", e.node.Name(), table)
	}
}
