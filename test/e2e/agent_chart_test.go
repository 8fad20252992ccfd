package e2e

// The chart-installed agent (issue 11, "measure as deployed"): deploy/helm/pressure installed from
// images built from this checkout onto the package node, as users install it (a DaemonSet), with the
// chart's defaults and only what the node and the test need.

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// The test release. Its own name and namespace: agent_loop_test.go creates the avoidance admission
// policy of a release "pressure" itself, which helm would refuse to adopt.
const (
	chartRelease   = "pressure-e2e"
	chartNamespace = "pressure-e2e"
	chartTag       = "e2e"
)

// installAgent installs the chart's agent on the package node and returns its Ready pod; the
// release is uninstalled when t ends. set are the test's values beside the defaults and
// chartinstall.NodeValues. The janitor is off: the test is about the agent, and its two pods
// would only add memory to the pods cgroup.
func installAgent(t *testing.T, e *env, set ...string) *chartinstall.Agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	root := mustRepo()
	h, err := chartinstall.FindHelm(ctx, root, t.TempDir())
	if err != nil {
		clustertest.SkipOrFail(t, "helm unavailable (hack/install-helm.sh needs the Go module proxy): %v", err)
	}
	start := time.Now()
	imgs, err := chartinstall.DaemonImages(ctx, root, t.TempDir(), chartTag, chartinstall.AgentComponent)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.node.ImportImages(ctx, imgs); err != nil {
		t.Fatal(err)
	}
	rel := chartinstall.Release{Helm: h, Chart: chartinstall.ChartDir(root), Name: chartRelease,
		Namespace: chartNamespace, Kubeconfig: e.cp.Kubeconfig()}
	values := append(chartinstall.NodeValues(e.node, chartTag), "janitor.enabled=false")
	out, err := rel.Install(ctx, append(values, set...)...)
	t.Cleanup(func() { uninstallAgent(t, e, rel) })
	if err != nil {
		t.Fatal(err)
	}
	a, err := chartinstall.WaitAgent(ctx, e.client, chartNamespace, e.node.Name())
	if err != nil {
		t.Fatalf("%v\nhelm install said:\n%s", err, out)
	}
	t.Logf("chart installed (values %s), agent pod %s Ready %s after the image build started",
		strings.Join(append(values, set...), " "), a.Pod.Name, time.Since(start).Round(time.Millisecond))
	requireArmed(ctx, t, a, "memcg", "psi", "poll")
	t.Cleanup(func() {
		if t.Failed() {
			lines := strings.Split(strings.TrimSpace(strings.Join(a.LogLines(context.Background(), ""), "\n")), "\n")
			t.Logf("agent log tail:\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	return a
}

// requireArmed fails the test unless each notifier is armed in the installed agent (its
// pressure_agent_notifier_armed metric): as the chart installs it on this cgroup v1 node, least
// privilege must still arm them.
func requireArmed(ctx context.Context, t *testing.T, a *chartinstall.Agent, notifiers ...string) {
	t.Helper()
	text, err := a.Metrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	armed := chartinstall.ArmedNotifiers(text)
	for _, n := range notifiers {
		if !armed[n] {
			lines := a.LogLines(ctx, "notifiers")
			t.Fatalf("notifier %s is not armed in the chart-installed agent (armed: %v); its start log:\n%s",
				n, armed, strings.Join(lines, "\n"))
		}
	}
	t.Logf("notifiers armed in the chart-installed agent: %v", armed)
}

// uninstallAgent removes the release and waits until the agent pod has left the node, so that the
// package's later tests see no agent they did not start.
func uninstallAgent(t *testing.T, e *env, rel chartinstall.Release) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := rel.Uninstall(ctx); err != nil {
		t.Errorf("%v", err)
	}
	if err := chartinstall.WaitNoAgent(ctx, e.client, chartNamespace, e.node.Name()); err != nil {
		t.Errorf("%v", err)
	}
}

// inNamespace keeps the lines that name namespace ns (the agent's log covers every subtest).
func inNamespace(lines []string, ns string) []string {
	var out []string
	for _, l := range lines {
		if strings.Contains(l, `"`+ns+`/`) {
			out = append(out, l)
		}
	}
	return out
}
