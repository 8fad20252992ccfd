package deploy

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// Release name and namespace the tests render with: the resources are then named pressure-agent
// and pressure-janitor.
const (
	releaseName = "pressure"
	releaseNS   = "pressure-system"
	// kubeVersion is the version helm template assumes (the chart requires >= 1.30; helm's own
	// default is older): the pinned Kubernetes of test/tools.
	kubeVersion = "1.37.2"
	// live turns the chart's dry-run default off: tests of what the chart's objects do once the
	// operator lets it act (avoidance policy, the agent's ConfigMap rights) render with it.
	live = "dryRun=false"
)

var (
	helmOnce sync.Once
	helmPath string
	helmErr  error
)

// repoRoot is the module root.
func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	root, err := cluster.RepoRoot(wd)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return root
}

func chartDir(t testing.TB) string { return chartinstall.ChartDir(repoRoot(t)) }

// helm returns the pinned helm binary, installing it once with hack/install-helm.sh.
func helm(t testing.TB) string {
	t.Helper()
	helmOnce.Do(func() {
		h, err := chartinstall.FindHelm(context.Background(), repoRoot(t), "")
		helmPath, helmErr = h.Bin, err
	})
	if helmErr != nil {
		clustertest.SkipOrFail(t, "hack/install-helm.sh could not install helm (needs the Go module proxy): %v", helmErr)
	}
	return helmPath
}

// runHelm runs helm with args and returns stdout; a failure fails the test with stderr.
func runHelm(t testing.TB, args ...string) string {
	t.Helper()
	out, err := tryHelm(t, args...)
	if err != nil {
		t.Fatalf("helm %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// tryHelm runs helm with a private helm home.
func tryHelm(t testing.TB, args ...string) (string, error) {
	t.Helper()
	return chartinstall.Helm{Bin: helm(t), Home: t.TempDir()}.Run(context.Background(), args...)
}

// valuesFile is a values file of the chart: "" for the defaults, else a path relative to the chart.
type valuesFile string

const (
	defaultValues valuesFile = ""
	allValues     valuesFile = "ci/all-values.yaml"
)

// render runs helm template for the release and returns the manifest text.
func render(t testing.TB, values valuesFile, set ...string) string {
	t.Helper()
	args := []string{"template", releaseName, chartDir(t), "--namespace", releaseNS, "--kube-version", kubeVersion}
	if values != "" {
		args = append(args, "-f", filepath.Join(chartDir(t), string(values)))
	}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return runHelm(t, args...)
}

// objects decodes a multi-document manifest.
func objects(t testing.TB, manifest string) []*unstructured.Unstructured {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	var objs []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return objs
		}
		if err != nil {
			t.Fatalf("decode rendered manifest: %v", err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
}

// find returns the object of kind and name, failing the test when it is absent.
func find(t testing.TB, objs []*unstructured.Unstructured, kind, name string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && o.GetName() == name {
			return o
		}
	}
	t.Fatalf("rendered manifest has no %s %q", kind, name)
	return nil
}

// kindsOf lists "Kind/name" of every object, in manifest order.
func kindsOf(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}
