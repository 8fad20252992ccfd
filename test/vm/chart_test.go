package vm_test

import (
	"context"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/testenv"
	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/images"
	"github.com/kube-pressure/pressure/test/vm"
)

const chartTag = "v2guest"

// chartValues install the chart on the guest node with its defaults (the agent and the janitor) and what
// the node needs: the images imported at boot (never pulled) and the kubelet's configuration file in the
// guest, then set.
// recursiveReadOnly stays the default Auto: the non-root agent gets IfPossible, which the guest's
// containerd 1.6 serves as plain read-only mounts (one read-only cgroup2 mount on this v2 node).
func chartValues(set ...string) []string {
	return append([]string{"image.pullPolicy=Never", "image.tag=" + chartTag, "dryRun=false",
		"agent.kubeletConfig.hostPath=" + vm.GuestKubeletConfig}, set...)
}

// chartParts are the helm binary and the images of the agent and the janitor, built once per test.
type chartParts struct {
	helm   chartinstall.Helm
	images []images.Image
}

func buildChartParts(ctx context.Context, t *testing.T) chartParts {
	t.Helper()
	root := moduleRoot(t)
	h, err := chartinstall.FindHelm(ctx, root, t.TempDir())
	if err != nil {
		testenv.SkipOrFail(t, "helm unavailable (hack/install-helm.sh needs the Go module proxy): %v", err)
	}
	imgs, err := chartinstall.DaemonImages(ctx, root, t.TempDir(), chartTag, chartinstall.AgentComponent, chartinstall.JanitorComponent)
	if err != nil {
		t.Fatal(err)
	}
	return chartParts{helm: h, images: imgs}
}

// install runs helm install of the chart against the control plane and waits for the agent pod on n and
// the janitor's replicas to be Ready. It returns the release (uninstall it before the node stops) and the time the install took.
func (c chartParts) install(ctx context.Context, t *testing.T, p nodeParts, n *vm.Node, set ...string) (chartinstall.Release, time.Duration) {
	t.Helper()
	start := time.Now()
	rel := chartinstall.Release{Helm: c.helm, Chart: chartinstall.ChartDir(moduleRoot(t)), Name: "pressure",
		Namespace: vm.ChartNamespace, Kubeconfig: p.cp.Kubeconfig()}
	out, err := rel.Install(ctx, chartValues(set...)...)
	if err != nil {
		t.Fatalf("%v\n%s\n%s", err, out, n.Guest.Tail(40))
	}
	if _, err := chartinstall.WaitAgent(ctx, n.Client, vm.ChartNamespace, n.Name); err != nil {
		t.Fatalf("%v\n%s", err, n.Guest.Tail(40))
	}
	replicas, err := chartinstall.WaitJanitor(ctx, n.Client, vm.ChartNamespace, rel.Name+"-janitor")
	if err != nil {
		t.Fatalf("%v\n%s", err, n.Guest.Tail(40))
	}
	t.Logf("janitor: %d replicas Ready", replicas)
	return rel, time.Since(start)
}

// installForTest is installLogged with the release uninstalled when t ends (before the node stops:
// cleanups run last-registered first): the uninstall, its hook included, must work on cgroup v2.
func (c chartParts) installForTest(ctx context.Context, t *testing.T, p nodeParts, n *vm.Node, set ...string) {
	t.Helper()
	rel := c.installLogged(ctx, t, p, n, set...)
	timedCleanup(t, "chart uninstalled", func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return rel.Uninstall(ctx)
	})
}

// installLogged is install (with set beside chartValues), logged. The release is left in place: it goes
// with the test's control plane and guest, which are discarded when the test ends. An uninstall under TCG
// takes 20 to 25 s (its hook Job and the pods' termination in the guest), so only the tests that check it
// (installForTest) pay for it.
func (c chartParts) installLogged(ctx context.Context, t *testing.T, p nodeParts, n *vm.Node, set ...string) chartinstall.Release {
	t.Helper()
	rel, took := c.install(ctx, t, p, n, set...)
	t.Logf("chart installed, agent pod Ready in %s", took.Round(100*time.Millisecond))
	return rel
}
