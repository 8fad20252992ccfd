package chartcompat

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// release is one supported minor: its API server ("" for the pinned one) and whether it serves
// MutatingAdmissionPolicy v1 (1.36+).
type release struct {
	minor      string
	older      bool
	mutatingV1 bool
}

func TestChartDefaultsInstallOnEverySupportedAPIServer(t *testing.T) {
	releases := []release{{minor: "v1.34", older: true}, {minor: "v1.35", older: true},
		{minor: "v1.36", older: true, mutatingV1: true}, {minor: "pinned", mutatingV1: true}}
	for _, r := range releases {
		t.Run(r.minor, func(t *testing.T) {
			var opts []clustertest.Option
			if r.older {
				bin := clustertest.OlderAPIServer(t, r.minor)
				opts = append(opts, clustertest.WithOptions(func(o *cluster.ControlPlaneOptions) { o.APIServer = bin }))
			}
			cp := clustertest.ControlPlane(t, opts...)
			installDefaults(t, cp, r)
		})
	}
}

// installDefaults installs the chart with its default values (helm install, no --wait: there is no
// node for the agent and no image for the janitor) and checks what the API server holds afterwards.
func installDefaults(t *testing.T, cp *cluster.ControlPlane, r release) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, h := chartinstall.HelmForTest(ctx, t)
	rc := cp.RESTConfig()
	dc, err := discovery.NewDiscoveryClientForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	v, err := dc.ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if r.older && !strings.HasPrefix(v.GitVersion, r.minor+".") {
		t.Fatalf("API server reports %s; want %s.x", v.GitVersion, r.minor)
	}
	t.Logf("API server %s", v.GitVersion)
	kc := cp.Kubeconfig()
	// The chart's defaults (a first install is a dry run), then what an operator does next: dryRun=false.
	steps := []struct {
		args   []string
		acting bool
	}{
		{[]string{"install", "pressure", chartinstall.ChartDir(root), "--create-namespace"}, false},
		{[]string{"upgrade", "pressure", chartinstall.ChartDir(root), "--reuse-values", "--set", "dryRun=false"}, true},
		// Once more: the avoidance webhook's certificate (before 1.36) is read back, not generated anew.
		{[]string{"upgrade", "pressure", chartinstall.ChartDir(root), "--reuse-values"}, true},
	}
	var webhookCA string
	for _, st := range steps {
		out, err := h.Run(ctx, append(st.args, "--namespace", "pressure", "--kubeconfig", kc)...)
		if err != nil {
			t.Fatalf("helm %s on %s: %v\n%s", strings.Join(st.args[:1], " "), v.GitVersion, err, out)
		}
		const avoidNote = "has no MutatingAdmissionPolicy v1"
		if got := strings.Contains(out, avoidNote); got == r.mutatingV1 {
			t.Errorf("helm %s's notes on %s mention %q: %v; want %v\n%s", st.args[0], v.GitVersion, avoidNote, got, !r.mutatingV1, out)
		}
		objs := checkRendered(ctx, t, h, kc, rc, dc, v.GitVersion, st.args[0], st.acting && r.mutatingV1, st.acting && !r.mutatingV1)
		if ca := caBundle(objs); ca != "" {
			if webhookCA != "" && ca != webhookCA {
				t.Errorf("helm %s on %s generated a new CA for the avoidance webhook; want the Secret's kept", st.args[0], v.GitVersion)
			}
			webhookCA = ca
		}
	}
	if !r.mutatingV1 && webhookCA == "" {
		t.Errorf("no avoidance webhook caBundle rendered on %s", v.GitVersion)
	}
}

// caBundle returns the avoidance webhook's caBundle in objs, "" without one.
func caBundle(objs []*unstructured.Unstructured) string {
	for _, o := range objs {
		if o.GetKind() != "MutatingWebhookConfiguration" {
			continue
		}
		hooks, _, _ := unstructured.NestedSlice(o.Object, "webhooks")
		if len(hooks) > 0 {
			ca, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle")
			return ca
		}
	}
	return ""
}

// checkRendered checks the release's manifest (helm get manifest) after step: the daemons and the
// agent's validating policies always, the avoidance's MutatingAdmissionPolicy exactly when wantMutating,
// the janitor's avoidance webhook (its fallback before 1.36) exactly when wantWebhook; and every
// rendered object is stored on the API server. It returns the rendered objects.
func checkRendered(ctx context.Context, t *testing.T, h chartinstall.Helm, kc string, rc *rest.Config,
	dc discovery.DiscoveryInterface, version, step string, wantMutating, wantWebhook bool) []*unstructured.Unstructured {
	t.Helper()
	manifest, err := h.Run(ctx, "get", "manifest", "pressure", "--namespace", "pressure", "--kubeconfig", kc)
	if err != nil {
		t.Fatalf("helm get manifest: %v\n%s", err, manifest)
	}
	objs, err := parseManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
	}
	for _, k := range []string{"DaemonSet", "Deployment", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"} {
		if kinds[k] == 0 {
			t.Errorf("after helm %s on %s the chart rendered no %s (kinds %v)", step, version, k, sortedKinds(kinds))
		}
	}
	if got := kinds["MutatingAdmissionPolicy"] > 0; got != wantMutating {
		t.Errorf("after helm %s on %s the chart rendered a MutatingAdmissionPolicy: %v; want %v (admissionregistration.k8s.io/v1 1.36+, and not in a dry run)",
			step, version, got, wantMutating)
	}
	if got := kinds["MutatingWebhookConfiguration"] > 0; got != wantWebhook {
		t.Errorf("after helm %s on %s the chart rendered the avoidance webhook: %v; want %v (without admissionregistration.k8s.io/v1 MutatingAdmissionPolicy, and not in a dry run)",
			step, version, got, wantWebhook)
	}
	requireOnServer(ctx, t, rc, dc, objs)
	t.Logf("after helm %s on %s: %d objects rendered and stored (%s)", step, version, len(objs), sortedKinds(kinds))
	return objs
}

// requireOnServer GETs every rendered object from the API server.
func requireOnServer(ctx context.Context, t *testing.T, rc *rest.Config, dc discovery.DiscoveryInterface, objs []*unstructured.Unstructured) {
	t.Helper()
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	dyn, err := dynamic.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		m, err := mapper.RESTMapping(schema.GroupKind{Group: gvk.Group, Kind: gvk.Kind}, gvk.Version)
		if err != nil {
			t.Errorf("%s %s: the API server does not serve it: %v", gvk, o.GetName(), err)
			continue
		}
		ri := dyn.Resource(m.Resource)
		var get func(context.Context, string, metav1.GetOptions, ...string) (*unstructured.Unstructured, error) = ri.Get
		if m.Scope.Name() == "namespace" {
			ns := o.GetNamespace()
			if ns == "" {
				ns = "pressure"
			}
			get = ri.Namespace(ns).Get
		}
		if _, err := get(ctx, o.GetName(), metav1.GetOptions{}); err != nil {
			t.Errorf("%s %s: %v", gvk, o.GetName(), err)
		}
	}
}

// parseManifest splits helm's manifest into objects.
func parseManifest(s string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for i, doc := range strings.Split(s, "\n---") {
		if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(doc), "---")) == "" {
			continue
		}
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			return nil, fmt.Errorf("manifest document %d: %w", i, err)
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
	return out, nil
}

func sortedKinds(kinds map[string]int) string {
	var ks []string
	for k, n := range kinds {
		ks = append(ks, fmt.Sprintf("%s×%d", k, n))
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// The chart's kubeVersion is the oldest release this package installs it on: helm refuses older ones
// before anything reaches a cluster.
func TestChartRefusesReleasesOlderThanTheOldestTested(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, h := chartinstall.HelmForTest(ctx, t)
	for _, tc := range []struct {
		version string
		ok      bool
	}{{"1.33.9", false}, {"1.34.0", true}, {"1.37.2", true}} {
		out, err := h.Run(ctx, "template", "pressure", chartinstall.ChartDir(root), "--kube-version", tc.version)
		if (err == nil) != tc.ok {
			t.Errorf("helm template --kube-version %s: err %v; want ok=%v\n%.600s", tc.version, err, tc.ok, out)
		}
		if !tc.ok && !strings.Contains(out+fmt.Sprint(err), "kubeVersion") {
			t.Errorf("helm template --kube-version %s refused without naming kubeVersion: %v\n%.600s", tc.version, err, out)
		}
	}
}
