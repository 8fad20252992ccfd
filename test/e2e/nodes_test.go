package e2e

// `kubectl pressure nodes` against the package's real node: the real kubelet's Summary and /configz
// through the apiserver's node proxy give the node's tightest margin. The many-node and no-answer
// cases are level-1 tests in internal/cli/nodes_cluster_test.go.

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/cli"
)

func TestNodesShowsTheRealNodesTightestMargin(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := kubectlPressure(ctx, t, e, "nodes", "-o", "json")
	if err != nil {
		t.Fatalf("nodes: %v", err)
	}
	var r cli.NodesReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("nodes -o json: %v\n%s", err, out)
	}
	if r.Partial || len(r.Items) != 1 || r.Items[0].Node != e.node.Name() {
		t.Fatalf("nodes = %+v, want one complete answer for node %s", r, e.node.Name())
	}
	m := r.Items[0].Tightest
	if m == nil {
		t.Fatalf("node %s: no tightest margin, want one from the real kubelet's Summary", e.node.Name())
	}
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
}
