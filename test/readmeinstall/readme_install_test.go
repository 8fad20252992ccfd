package readmeinstall

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// The release and namespace the README installs.
const (
	release   = "pressure"
	namespace = "pressure-system"
)

// TestREADMEInstallStepsGiveAReadyDryRunAgentAndTheRemovalStepsRemoveIt runs the README's install
// block on the test node, checks the agent it installed, then runs the README's removal block.
func TestREADMEInstallStepsGiveAReadyDryRunAgentAndTheRemovalStepsRemoveIt(t *testing.T) {
	if p := clustertest.NodeProblem(); p != "" {
		clustertest.SkipOrFail(t, "level-2 node unavailable: %s", p)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := cluster.RepoRoot(wd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute) // includes the node lock's wait
	defer cancel()
	h, err := chartinstall.FindHelm(ctx, root, t.TempDir())
	if err != nil {
		clustertest.SkipOrFail(t, "helm unavailable (hack/install-helm.sh needs the Go module proxy): %v", err)
	}
	version := readmeVersion(t, root)
	kubectl := clustertest.Binaries(t).Path("kubectl")
	dir, err := os.MkdirTemp("", "pressure-readme-") // short: containerd's socket lives below it
	if err != nil {
		t.Fatal(err)
	}
	cp := clustertest.ControlPlane(t, clustertest.WithOptions(func(o *cluster.ControlPlaneOptions) { o.Dir = dir }))
	node := clustertest.Node(t, cp, cluster.NodeOptions{})
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(),
		"KUBECONFIG="+cp.Kubeconfig(),
		"KUBELET_CONFIG="+node.KubeletConfigPath(),
		"CONTAINERD_ADDRESS="+node.ContainerdSocket(),
		"PATH="+filepath.Dir(h.Bin)+":"+filepath.Dir(kubectl)+":"+os.Getenv("PATH"),
		"HELM_CACHE_HOME="+h.Home+"/cache", "HELM_CONFIG_HOME="+h.Home+"/config", "HELM_DATA_HOME="+h.Home+"/data")

	start := time.Now()
	out := runScript(ctx, t, root, env)
	t.Logf("README install steps done in %s", time.Since(start).Round(time.Second))
	if !strings.Contains(out, node.Name()) {
		t.Errorf("kubectl pressure nodes (the README's last step) did not name node %s; the steps printed:\n%s", node.Name(), tail(out, 30))
	}
	waitCtx, waitCancel := context.WithTimeout(ctx, 2*time.Minute)
	defer waitCancel()
	a, err := chartinstall.WaitAgent(waitCtx, c, namespace, node.Name())
	if err != nil {
		t.Fatalf("after the README's install steps: %v", err)
	}
	t.Logf("agent pod %s Ready", a.Pod.Name)
	checkAgent(ctx, t, a, version)
	checkBinaryVersion(t, filepath.Join(root, "bin", "pressure-agent"), version)

	runScript(ctx, t, root, env, "--remove")
	checkRemoved(ctx, t, c)
}

// readmeVersion is the VERSION the README's install block sets.
func readmeVersion(t *testing.T, root string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(root, "hack", "readme-install.sh"), "--print").CombinedOutput()
	if err != nil {
		t.Fatalf("hack/readme-install.sh --print: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^VERSION=(v\S+)$`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("README install block: no line VERSION=v...; it is:\n%s", out)
	}
	return string(m[1])
}

// runScript runs hack/readme-install.sh with args and returns its output; it fails t with the output's
// tail when the script fails.
func runScript(ctx context.Context, t *testing.T, root string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "readme-install.sh"), args...)
	cmd.Dir, cmd.Env = root, env
	b, err := cmd.CombinedOutput()
	out := string(b)
	if err != nil {
		t.Fatalf("hack/readme-install.sh %s: %v; its output ends:\n%s", strings.Join(args, " "), err, tail(out, 60))
	}
	t.Logf("hack/readme-install.sh %s output ends:\n%s", strings.Join(args, " "), tail(out, 15))
	return out
}

// checkAgent wants the agent running the image the README built, with the tag it set, in dry-run.
func checkAgent(ctx context.Context, t *testing.T, a *chartinstall.Agent, version string) {
	t.Helper()
	want := "pressure.local/pressure-agent:" + version
	for _, ctr := range a.Pod.Spec.Containers {
		if ctr.Name == "agent" && ctr.Image != want {
			t.Errorf("agent container image %s; want %s (the README's make images and image.tag)", ctr.Image, want)
		}
	}
	var started string
	for _, l := range a.LogLines(ctx, "pressure-agent started") {
		started = l
	}
	if !strings.Contains(started, `"dry_run":true`) {
		t.Errorf("agent start log line %q; want \"dry_run\":true (the README installs in dry-run)", started)
	}
}

// checkBinaryVersion wants the agent binary make images built to report version.
func checkBinaryVersion(t *testing.T, bin, version string) {
	t.Helper()
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bin, err, out)
	}
	if !strings.Contains(string(out), " "+version+" ") {
		t.Errorf("%s --version printed %q; want version %s", bin, strings.TrimSpace(string(out)), version)
	}
}

// checkRemoved wants, after the README's removal steps, no release namespace and none of the release's
// cluster-scoped objects.
func checkRemoved(ctx context.Context, t *testing.T, c kubernetes.Interface) {
	t.Helper()
	if _, err := c.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("namespace %s after the README's removal steps: %v; want NotFound", namespace, err)
	}
	sel := metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + release}
	var left []string
	if l, err := c.RbacV1().ClusterRoles().List(ctx, sel); err != nil {
		t.Error(err)
	} else {
		for _, o := range l.Items {
			left = append(left, "ClusterRole "+o.Name)
		}
	}
	if l, err := c.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, sel); err != nil {
		t.Error(err)
	} else {
		for _, o := range l.Items {
			left = append(left, "ValidatingAdmissionPolicy "+o.Name)
		}
	}
	if len(left) > 0 {
		t.Errorf("left after the README's removal steps: %s", strings.Join(left, ", "))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
