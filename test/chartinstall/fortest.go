package chartinstall

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// ForTest installs the chart's agent on a test package's level-2 node: images built from the checkout
// with Tag and imported into the node, the release Name in Namespace, the janitor off unless Janitor
// (most tests are about the agent, and its two pods would only add memory to the pods cgroup).
type ForTest struct {
	Name, Namespace, Tag string
	Node                 *cluster.Node
	ControlPlane         *cluster.ControlPlane
	Client               kubernetes.Interface
	// Janitor installs the janitor too (its image built and imported).
	Janitor bool
	// Defaults installs the chart's defaults contender (NodeValues alone) instead of the memcg one.
	Defaults bool
}

// HelmForTest returns the module's root (from the test's working directory) and the pinned helm, skipping
// t without helm, or failing it under CI=true.
func HelmForTest(ctx context.Context, t testing.TB) (string, Helm) {
	t.Helper()
	wd, _ := os.Getwd()
	root, err := cluster.RepoRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	h, err := FindHelm(ctx, root, t.TempDir())
	if err != nil {
		clustertest.SkipOrFail(t, "helm unavailable (hack/install-helm.sh needs the Go module proxy): %v", err)
	}
	return root, h
}

// Install installs the release with set beside NodeValues and MemcgRootValues (the e2e tests' agent
// is the memcg notifier contender; NodeValues alone with Defaults), waits for its Ready agent pod and returns it;
// the release is uninstalled, and the agent pod gone from the node, when t ends (the package's later tests
// see no agent they did not start). On failure the agent's log tail is printed. Without helm the test
// skips, or fails under CI=true.
func (f ForTest) Install(t testing.TB, set ...string) *Agent {
	t.Helper()
	a, _ := f.InstallRelease(t, set...)
	return a
}

// InstallRelease is Install that also returns the release, for a test that uninstalls it itself (the
// uninstall at the end of t then finds nothing to do).
func (f ForTest) InstallRelease(t testing.TB, set ...string) (*Agent, Release) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	root, h := HelmForTest(ctx, t)
	start := time.Now()
	components := []string{AgentComponent}
	if f.Janitor {
		components = append(components, JanitorComponent)
	}
	imgs, err := DaemonImages(ctx, root, t.TempDir(), f.Tag, components...)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Node.ImportImages(ctx, imgs); err != nil {
		t.Fatal(err)
	}
	rel := Release{Helm: h, Chart: ChartDir(root), Name: f.Name, Namespace: f.Namespace, Kubeconfig: f.ControlPlane.Kubeconfig()}
	values := f.values(set)
	out, err := rel.Install(ctx, values...)
	t.Cleanup(func() { f.uninstall(t, rel) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a, err := WaitAgent(ctx, f.Client, f.Namespace, f.Node.Name())
	if err != nil {
		t.Fatalf("%v\nhelm install said:\n%s", err, out)
	}
	t.Logf("chart installed (values %s), agent pod %s Ready %s after the image build started",
		strings.Join(values, " "), a.Pod.Name, time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		if t.Failed() {
			lines := a.LogLines(context.Background(), "")
			t.Logf("agent log tail:\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	return a, rel
}

// values are NodeValues, the contender's values, janitor.enabled=false unless Janitor, then set.
func (f ForTest) values(set []string) []string {
	out := NodeValues(f.Node, f.Tag)
	if !f.Defaults {
		out = append(out, MemcgRootValues()...)
	}
	if !f.Janitor {
		out = append(out, "janitor.enabled=false")
	}
	return append(out, set...)
}

func (f ForTest) uninstall(t testing.TB, rel Release) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := rel.Uninstall(ctx); err != nil {
		t.Error(err)
	}
	if err := WaitNoAgent(ctx, f.Client, f.Namespace, f.Node.Name()); err != nil {
		t.Error(err)
	}
}
