package deploy

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// kubectl runs the pinned kubectl against cp as cluster admin and returns its combined output.
func kubectl(t testing.TB, cp *cluster.ControlPlane, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(clustertest.Binaries(t).Path("kubectl"), append([]string{"--kubeconfig", cp.Kubeconfig()}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func mustKubectl(t testing.TB, cp *cluster.ControlPlane, stdin string, args ...string) string {
	t.Helper()
	out, err := kubectl(t, cp, stdin, args...)
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// createNamespace creates the release namespace.
func createNamespace(t testing.TB, cp *cluster.ControlPlane, name string) {
	t.Helper()
	client, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("create namespace %s: %v", name, err)
	}
}

// manifestOf joins objects into one YAML stream.
func manifestOf(t testing.TB, objs []*unstructured.Unstructured) string {
	t.Helper()
	var b strings.Builder
	for _, o := range objs {
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	return b.String()
}

func TestRenderedManifestsPassServerSideDryRunApply(t *testing.T) {
	manifests := map[valuesFile]string{defaultValues: render(t, defaultValues), allValues: render(t, allValues)}
	cp := controlPlane(t)
	createNamespace(t, cp, releaseNS)
	crds, err := os.ReadFile(filepath.Join("testdata", "monitoring-crds.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	mustKubectl(t, cp, string(crds), "apply", "--server-side", "-f", "-")
	mustKubectl(t, cp, "", "wait", "--for=condition=Established", "--timeout=60s",
		"crd/servicemonitors.monitoring.coreos.com", "crd/prometheusrules.monitoring.coreos.com")
	for _, v := range []valuesFile{defaultValues, allValues} {
		t.Run("values="+string(v), func(t *testing.T) {
			manifest := manifests[v]
			objs := objects(t, manifest)
			var out string
			// Right after the CRDs are established discovery may still lag: retry briefly.
			deadline := time.Now().Add(30 * time.Second)
			for {
				out, err = kubectl(t, cp, manifest, "apply", "--server-side", "--dry-run=server",
					"--field-manager=pressure-chart-test", "-f", "-")
				if err == nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(time.Second)
			}
			if err != nil {
				t.Fatalf("server-side dry-run apply: %v\n%s", err, out)
			}
			for _, o := range objs {
				line := regexp.MustCompile(`(?m)^` + strings.ToLower(o.GetKind()) + `(\.[a-z0-9.]+)?/` +
					regexp.QuoteMeta(o.GetName()) + ` serverside-applied \(server dry run\)$`)
				if !line.MatchString(out) {
					t.Errorf("%s/%s not reported as applied in:\n%s", o.GetKind(), o.GetName(), out)
				}
			}
			t.Logf("%d objects accepted by the API server (dry run)", len(objs))
		})
	}
	// The install an operator types: helm validates the values against values.schema.json before it
	// sends anything, so a typo (agent.dryrun for agent.dryRun, which would leave the agent evicting)
	// fails the install; the correct value passes the API server's dry run.
	install := []string{"install", releaseName, chartDir(t), "--namespace", releaseNS, "--kubeconfig", cp.Kubeconfig(), "--dry-run=server"}
	if out, err := tryHelm(t, append(install, "--set", "agent.dryRun=true")...); err != nil {
		t.Errorf("helm install --dry-run=server --set agent.dryRun=true: %v\n%s", err, out)
	}
	if _, err := tryHelm(t, append(install, "--set", "agent.dryrun=true")...); err == nil ||
		!strings.Contains(err.Error(), "at '/agent': additional properties 'dryrun' not allowed") {
		t.Errorf("helm install --dry-run=server --set agent.dryrun=true: %v, want the schema's refusal of the typo", err)
	}
}
