package chartinstall

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/kube-pressure/pressure/test/cluster"
)

// Release is one helm release of the chart.
type Release struct {
	Helm Helm
	// Chart is the chart directory (ChartDir).
	Chart string
	// Name and Namespace of the release. Cluster-scoped objects (ClusterRoles, admission
	// policies) are named after the release, so two releases on one cluster need two names.
	Name, Namespace string
	// Kubeconfig is an admin kubeconfig of the cluster.
	Kubeconfig string
}

// ChartDir is the chart of the module at root.
func ChartDir(root string) string { return filepath.Join(root, "deploy", "helm", "pressure") }

// NodeValues are the values an install on the level-2 test node needs beside the chart's defaults,
// and nothing more: the images DaemonImages wrote with tag (imported, never pulled), the test
// kubelet's configuration file, and dryRun=false (the tests are about what the chart does once the
// operator lets it act; a first install is a dry run). With these alone the agent runs as the chart
// installs it by default: non-root, no capability, host mounts read-only (recursiveReadOnly Auto:
// IfPossible, which containerd 1.6 here serves as plain read-only mounts).
func NodeValues(node *cluster.Node, tag string) []string {
	return []string{
		"image.pullPolicy=Never",
		"image.tag=" + tag,
		"agent.kubeletConfig.hostPath=" + node.KubeletConfigPath(),
		"dryRun=false",
	}
}

// MemcgRootValues are the named contender "memcg notifier (root, non-recursive read-only mounts)": the
// cgroup v1 memcg threshold notifier of a node whose kubelet uses the cgroupfs driver (pods cgroup
// kubepods), which runs the agent as uid 0. The chart wants recursive read-only mounts for a uid 0
// agent, which containerd 1.6 here cannot make (2.0+ can), so this contender accepts the writable
// cgroup tree explicitly, as an operator of such a node would have to.
func MemcgRootValues() []string {
	return []string{
		"agent.notifiers.memcg.enabled=true",
		"agent.notifiers.memcg.podsCgroup=" + PodsCgroup,
		"agent.recursiveReadOnly=IfPossible",
		"agent.insecureRootWithoutRecursiveReadOnly=true",
	}
}

// PodsCgroup is the test kubelet's pods cgroup below each cgroup v1 controller (cgroupfs driver).
const PodsCgroup = "kubepods"

// Install runs helm install with the values set (each "key=value") and returns helm's output.
// helm's --wait lets a DaemonSet of one node pass with no pod Ready (maxUnavailable 10%): wait for
// the agent with WaitAgent.
func (r Release) Install(ctx context.Context, set ...string) (string, error) {
	return r.apply(ctx, "install", []string{"--create-namespace"}, set)
}

// Upgrade runs helm upgrade --reuse-values with the values set (each "key=value") and returns helm's
// output.
func (r Release) Upgrade(ctx context.Context, set ...string) (string, error) {
	return r.apply(ctx, "upgrade", []string{"--reuse-values"}, set)
}

// Reset runs helm upgrade --reset-values with the values set: the chart's defaults and these, nothing
// kept from earlier installs or upgrades.
func (r Release) Reset(ctx context.Context, set ...string) (string, error) {
	return r.apply(ctx, "upgrade", []string{"--reset-values"}, set)
}

// apply runs helm install or upgrade of the release with --wait.
func (r Release) apply(ctx context.Context, verb string, flags, set []string) (string, error) {
	args := append([]string{verb, r.Name, r.Chart, "--namespace", r.Namespace, "--kubeconfig", r.Kubeconfig,
		"--wait", "--timeout", "4m"}, flags...)
	for _, s := range set {
		args = append(args, "--set", s)
	}
	out, err := r.Helm.Run(ctx, args...)
	if err != nil {
		return out, fmt.Errorf("helm %s %s: %w", verb, r.Name, err)
	}
	return out, nil
}

// Uninstall runs helm uninstall --wait: the release's objects are deleted; their pods go by garbage
// collection afterwards (WaitNoAgent waits for the agent's). A release already uninstalled is no error.
func (r Release) Uninstall(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if _, err := r.Helm.Run(ctx, "uninstall", r.Name, "--namespace", r.Namespace, "--kubeconfig", r.Kubeconfig,
		"--wait", "--timeout", "2m", "--ignore-not-found"); err != nil {
		return fmt.Errorf("helm uninstall %s: %w", r.Name, err)
	}
	return nil
}
