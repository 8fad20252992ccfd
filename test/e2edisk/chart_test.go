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

	"github.com/kube-pressure/pressure/test/chartinstall"
)

const (
	chartRelease   = "pressure-e2edisk"
	chartNamespace = "pressure-e2edisk"
	chartTag       = "e2edisk"
)

// installAgent installs the chart's agent on the package node (chartinstall.ForTest: janitor off,
// uninstalled when t ends) with set beside the defaults and returns its Ready pod.
func installAgent(t *testing.T, e *env, set ...string) *chartinstall.Agent {
	t.Helper()
	return chartinstall.ForTest{Name: chartRelease, Namespace: chartNamespace, Tag: chartTag, Node: e.node,
		ControlPlane: e.cp, Client: e.client}.Install(t, set...)
}

// The writer case with the chart-installed agent and agent.podDiskUsage: the agent pod, non-root in
// group 0 with only the pods directory and podLogsDir mounted, measures the writer's emptyDir and
// evicts it, and only it, with one eviction request, ahead of the kubelet (the in-process agent's
// assertions: agent.hostPaths.imageFsDir gives it the node's dedicated imagefs, so its nodefs headroom
// holds). The agent's log must
// not say the per-pod usage is unmeasured or that a walk failed.
func TestChartAgentWithPodDiskUsageEvictsOnlyTheWriter(t *testing.T) {
	e := requireNode(t)
	a := installAgent(t, e, "agent.podDiskUsage.enabled=true",
		"agent.podDiskUsage.kubeletPodsDir="+filepath.Join(e.node.KubeletRootDir(), "pods"),
		"agent.podDiskUsage.podLogsDir="+e.node.PodLogsDir(), "agent.config.syncPeriod=1s",
		// The node's real layout: containerd's root is its own filesystem (the dedicated imagefs). Without
		// it the agent takes nodefs for the image filesystem, withholds its headroom at the image GC mark
		// and acts at the kubelet's own threshold: a race with the kubelet's 10 s housekeeping.
		"agent.hostPaths.imageFsDir="+e.node.ContainerdRoot())
	writerCrossing(t, e, "disk-chart", func() { logModes(t, e) })
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
