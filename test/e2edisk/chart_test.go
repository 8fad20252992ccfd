package e2edisk

// The chart-installed agent on the disk-pressure node: deploy/helm/pressure installed from images built
// from this checkout (test/chartinstall), with agent.podDiskUsage on, so the agent pod measures the
// pods' volumes and logs through the chart's read-only mounts as a non-root process in group 0.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

const (
	chartRelease   = "pressure-e2edisk"
	chartNamespace = "pressure-e2edisk"
	chartTag       = "e2edisk"
)

// installAgent installs the chart's agent (janitor off) on the package node with set beside
// chartinstall.NodeValues, waits for its Ready pod and uninstalls the release when t ends.
func installAgent(t *testing.T, e *env, set ...string) *chartinstall.Agent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	wd, _ := os.Getwd()
	root, err := cluster.RepoRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	h, err := chartinstall.FindHelm(ctx, root, t.TempDir())
	if err != nil {
		clustertest.SkipOrFail(t, "helm unavailable (hack/install-helm.sh needs the Go module proxy): %v", err)
	}
	imgs, err := chartinstall.DaemonImages(ctx, root, t.TempDir(), chartTag, chartinstall.AgentComponent)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.node.ImportImages(ctx, imgs); err != nil {
		t.Fatal(err)
	}
	rel := chartinstall.Release{Helm: h, Chart: chartinstall.ChartDir(root), Name: chartRelease,
		Namespace: chartNamespace, Kubeconfig: e.cp.Kubeconfig()}
	values := append(chartinstall.NodeValues(e.node, chartTag), append([]string{"janitor.enabled=false"}, set...)...)
	out, err := rel.Install(ctx, values...)
	t.Cleanup(func() { uninstallAgent(t, e, rel) })
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a, err := chartinstall.WaitAgent(ctx, e.client, chartNamespace, e.node.Name())
	if err != nil {
		t.Fatalf("%v\nhelm install said:\n%s", err, out)
	}
	t.Logf("chart installed (values %s), agent pod %s Ready", strings.Join(values, " "), a.Pod.Name)
	t.Cleanup(func() {
		if t.Failed() {
			lines := a.LogLines(context.Background(), "")
			t.Logf("agent log tail:\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	return a
}

func uninstallAgent(t *testing.T, e *env, rel chartinstall.Release) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := rel.Uninstall(ctx); err != nil {
		t.Error(err)
	}
	if err := chartinstall.WaitNoAgent(ctx, e.client, chartNamespace, e.node.Name()); err != nil {
		t.Error(err)
	}
}

// The writer case with the chart-installed agent and agent.podDiskUsage: the agent pod, non-root in
// group 0 with only the pods directory and podLogsDir mounted, measures the writer's emptyDir and
// evicts it, and only it (the in-process agent's assertions, except that the kubelet, at the same
// threshold here, may evict the writer too). The agent's log must
// not say the per-pod usage is unmeasured or that a walk failed.
func TestChartAgentWithPodDiskUsageEvictsOnlyTheWriter(t *testing.T) {
	e := requireNode(t)
	a := installAgent(t, e, "agent.podDiskUsage.enabled=true",
		"agent.podDiskUsage.kubeletPodsDir="+filepath.Join(e.node.KubeletRootDir(), "pods"),
		"agent.podDiskUsage.podLogsDir="+e.node.PodLogsDir(), "agent.config.syncPeriod=1s")
	// Without imageFsDir the chart's agent takes nodefs for an image filesystem and acts at the kubelet's
	// own threshold (no headroom at the image GC mark): the kubelet may evict the writer in the same
	// moment.
	writerCrossing(t, e, "disk-chart", true, func() { logModes(t, e) })
	// "per-pod disk usage not measured" (no pods directory) and "per-pod disk usage: pod ...: permission
	// denied" (a walk refused) both start so.
	for _, bad := range []string{"per-pod disk usage"} {
		if lines := a.LogLines(context.Background(), bad); len(lines) > 0 {
			t.Errorf("agent log says %q:\n%s", bad, strings.Join(lines, "\n"))
		}
	}
}

// logModes logs the mode and owner of the kubelet's pods directory, one pod's directory and volumes
// directory, and podLogsDir: what the agent's supplemental group 0 is for.
func logModes(t *testing.T, e *env) {
	pods := filepath.Join(e.node.KubeletRootDir(), "pods")
	paths := []string{pods, e.node.PodLogsDir()}
	if entries, err := os.ReadDir(pods); err == nil && len(entries) > 0 {
		paths = append(paths, filepath.Join(pods, entries[0].Name()), filepath.Join(pods, entries[0].Name(), "volumes"))
	}
	var out []string
	for _, p := range paths {
		var st syscall.Stat_t
		if err := syscall.Stat(p, &st); err != nil {
			out = append(out, p+": "+err.Error())
			continue
		}
		out = append(out, fmt.Sprintf("%s %#o %d:%d", p, st.Mode&0o7777, st.Uid, st.Gid))
	}
	t.Logf("modes: %s", strings.Join(out, "; "))
}
