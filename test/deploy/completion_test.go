package deploy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// TestKubectlCompletesThePluginsNodeNames runs the real kubectl's plugin completion (`kubectl pressure
// explain <TAB>`, kubectl 1.26+): kubectl finds deploy/krew/kubectl_complete-pressure on PATH, which
// asks kubectl-pressure, which lists the cluster's nodes from a real apiserver.
func TestKubectlCompletesThePluginsNodeNames(t *testing.T) {
	bins := clustertest.Binaries(t)
	cp := clustertest.ControlPlane(t)
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"worker-a1", "worker-a2", "worker-b1"} {
		createNode(t, c, n)
	}
	path := t.TempDir()
	build := exec.Command("go", "build", "-o", path, "./cmd/kubectl-pressure")
	build.Dir = repoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/kubectl-pressure: %v\n%s", err, out)
	}
	script, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "krew", "kubectl_complete-pressure"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "kubectl_complete-pressure"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ words, want []string }{
		{[]string{"pressure", "explain", "worker-a"}, []string{"worker-a1", "worker-a2"}},
		{[]string{"pressure", "snapshot", ""}, []string{"worker-a1", "worker-a2", "worker-b1"}},
		{[]string{"pressure", "ex"}, []string{"explain"}},
	} {
		cmd := exec.CommandContext(context.Background(), bins.Path("kubectl"), append([]string{"__complete"}, tc.words...)...)
		cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+cp.Kubeconfig())
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("kubectl __complete %v: %v\n%s", tc.words, err, stderr.String())
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
			if !strings.HasPrefix(l, ":") { // the directive line
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
		}
		if strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("kubectl __complete %q = %q, want %q (stderr %s)", tc.words, got, tc.want, stderr.String())
		}
	}
}
