package deploy

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

func TestHelmLintPassesWithDefaultValuesAndWithEveryOption(t *testing.T) {
	for _, v := range []valuesFile{defaultValues, allValues} {
		t.Run("values="+string(v), func(t *testing.T) {
			args := []string{"lint", "--strict", chartDir(t), "--namespace", releaseNS}
			if v != "" {
				args = append(args, "-f", filepath.Join(chartDir(t), string(v)))
			}
			out := runHelm(t, args...)
			if !strings.Contains(out, "1 chart(s) linted, 0 chart(s) failed") {
				t.Errorf("helm lint output:\n%s", out)
			}
		})
	}
}

// The defaults are a dry run (dryRun: true): the avoidance policy and its rights come with dryRun=false
// (TestDryRunIsOneSwitchThatMutatesNothing).
func TestDefaultValuesRenderBothComponentsWithTheirPoliciesAndNoMonitoringObjects(t *testing.T) {
	got := kindsOf(objects(t, render(t, defaultValues)))
	sort.Strings(got)
	want := []string{
		"ClusterRole/pressure-agent", "ClusterRole/pressure-agent-cleanup", "ClusterRole/pressure-janitor",
		"ClusterRoleBinding/pressure-agent", "ClusterRoleBinding/pressure-agent-cleanup", "ClusterRoleBinding/pressure-janitor",
		"ConfigMap/pressure-agent", "ConfigMap/pressure-janitor",
		"DaemonSet/pressure-agent", "Deployment/pressure-janitor",
		"Job/pressure-agent-cleanup", // the uninstall hook (agent.uninstallHook)
		"PodDisruptionBudget/pressure-janitor",
		"Role/pressure-agent-cleanup", "Role/pressure-janitor-leader-election",
		"RoleBinding/pressure-agent-cleanup", "RoleBinding/pressure-janitor-leader-election",
		"Service/pressure-agent-metrics", "Service/pressure-janitor-metrics",
		"ServiceAccount/pressure-agent", "ServiceAccount/pressure-agent-cleanup", "ServiceAccount/pressure-janitor",
		"ValidatingAdmissionPolicy/pressure-agent-own-node", "ValidatingAdmissionPolicy/pressure-agent-own-node-evictions",
		"ValidatingAdmissionPolicy/pressure-janitor-evidence", "ValidatingAdmissionPolicy/pressure-janitor-terminal-pods",
		"ValidatingAdmissionPolicyBinding/pressure-agent-own-node", "ValidatingAdmissionPolicyBinding/pressure-agent-own-node-evictions",
		"ValidatingAdmissionPolicyBinding/pressure-janitor-evidence", "ValidatingAdmissionPolicyBinding/pressure-janitor-terminal-pods",
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("rendered objects (-got +want):\n%s", d)
	}
}

func TestAllValuesRenderTheOptionalObjects(t *testing.T) {
	objs := objects(t, render(t, allValues))
	for _, kn := range [][2]string{
		{"ServiceMonitor", "pressure-all-agent"}, {"ServiceMonitor", "pressure-all-janitor"},
		{"PrometheusRule", "pressure-all"}, {"ConfigMap", "pressure-all-dashboard"},
		{"PriorityClass", "pressure-node-critical"}, {"ConfigMap", "pressure-all-agent"},
	} {
		find(t, objs, kn[0], kn[1])
	}
	ds := find(t, objs, "DaemonSet", "pressure-all-agent")
	c := container(t, ds)
	if got, want := c["image"], "registry.example.com/pressure/agent:v9.9.8"; got != want {
		t.Errorf("agent image %v, want %v", got, want)
	}
	args := strSlice(c["args"])
	for _, a := range []string{"--config=/etc/pressure/agent/config.yaml", "--node-name=$(NODE_NAME)", "--metrics-bind-address=:9080"} {
		if !slices.Contains(args, a) {
			t.Errorf("agent args %v lack %s", args, a)
		}
	}
	role := find(t, objs, "ClusterRole", "pressure-all-agent")
	if hasRule(role, "nodes/proxy") {
		t.Errorf("with agent.kubeletConfig.hostPath set the agent must not get nodes/proxy: %v", role.Object["rules"])
	}
	dash := find(t, objs, "ConfigMap", "pressure-all-dashboard")
	if got := dash.GetLabels()["grafana_dashboard"]; got != "1" {
		t.Errorf("dashboard ConfigMap label grafana_dashboard=%q, want 1", got)
	}
}

func TestAgentMountsTheHostReadOnlyWithoutHostNetworkAndNeedsHostPIDOnlyForCgroupKill(t *testing.T) {
	for _, tc := range []struct {
		name     string
		set      []string
		wantPID  bool
		wantCaps []string
	}{
		{name: "default", wantPID: false},
		{name: "cgroup kill", set: []string{"agent.cgroupKill.enabled=true"}, wantPID: true, wantCaps: []string{"KILL"}},
		{name: "kubelet config file", set: []string{"agent.kubeletConfig.hostPath=/var/lib/kubelet/config.yaml"}, wantPID: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := objects(t, render(t, defaultValues, tc.set...))
			ds := find(t, objs, "DaemonSet", "pressure-agent")
			spec := podSpec(t, ds)
			if spec["hostNetwork"] != false {
				t.Errorf("hostNetwork = %v, want false", spec["hostNetwork"])
			}
			if got := spec["hostPID"] == true; got != tc.wantPID {
				t.Errorf("hostPID = %v, want %v", got, tc.wantPID)
			}
			if got := spec["priorityClassName"]; got != "system-node-critical" {
				t.Errorf("priorityClassName = %v, want system-node-critical", got)
			}
			hostVolumes := map[string]bool{}
			for _, v := range spec["volumes"].([]any) {
				v := v.(map[string]any)
				if _, ok := v["hostPath"]; ok {
					hostVolumes[v["name"].(string)] = true
				}
			}
			c := container(t, ds)
			for _, m := range c["volumeMounts"].([]any) {
				m := m.(map[string]any)
				if hostVolumes[m["name"].(string)] && m["readOnly"] != true {
					t.Errorf("hostPath mount %v is not read-only", m)
				}
			}
			sc := c["securityContext"].(map[string]any)
			if sc["allowPrivilegeEscalation"] != false || sc["readOnlyRootFilesystem"] != true || sc["privileged"] == true {
				t.Errorf("securityContext %v: want allowPrivilegeEscalation false, readOnlyRootFilesystem true, not privileged", sc)
			}
			caps := sc["capabilities"].(map[string]any)
			if d := cmp.Diff(strSlice(caps["drop"]), []string{"ALL"}); d != "" {
				t.Errorf("capabilities.drop (-got +want):\n%s", d)
			}
			if d := cmp.Diff(strSlice(caps["add"]), tc.wantCaps); d != "" {
				t.Errorf("capabilities.add (-got +want):\n%s", d)
			}
		})
	}
}

func TestJanitorRunsTwoCriticalReplicasWithLeaseInTheReleaseNamespaceAndAPodDisruptionBudget(t *testing.T) {
	objs := objects(t, render(t, defaultValues))
	dep := find(t, objs, "Deployment", "pressure-janitor")
	if got := number(dep.Object, "spec", "replicas"); got != 2 {
		t.Errorf("janitor replicas = %v, want 2", got)
	}
	pdb := find(t, objs, "PodDisruptionBudget", "pressure-janitor")
	if got := number(pdb.Object, "spec", "minAvailable"); got != 1 {
		t.Errorf("PDB minAvailable = %v, want 1", got)
	}
	cm := find(t, objs, "ConfigMap", "pressure-janitor")
	raw, _, _ := unstructured.NestedString(cm.Object, "data", "config.yaml")
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(raw), &cfg); err != nil {
		t.Fatalf("janitor config.yaml: %v\n%s", err, raw)
	}
	le := cfg["leaderElection"].(map[string]any)
	if le["leaseNamespace"] != releaseNS || le["leaderElect"] != true {
		t.Errorf("leaderElection = %v, want leaderElect true in namespace %s", le, releaseNS)
	}
	if cfg["kind"] != "JanitorConfiguration" || cfg["metricsBindAddress"] != ":8080" {
		t.Errorf("janitor config %v", cfg)
	}
	sc := podSpec(t, dep)["securityContext"].(map[string]any)
	if sc["runAsNonRoot"] != true {
		t.Errorf("janitor pod securityContext %v: want runAsNonRoot", sc)
	}
	// Critical, so that neither the kubelet nor our agent evicts the pods that serve the avoidance
	// webhook under the very pressure the loop breaker answers.
	if got := podSpec(t, dep)["priorityClassName"]; got != "system-cluster-critical" {
		t.Errorf("janitor priorityClassName = %v, want system-cluster-critical", got)
	}
}

// TestEveryValueIsDocumentedInTheChartREADME: every leaf of values.yaml (maps are walked, lists
// and scalars are leaves) appears as `path` in README.md, and has a comment in values.yaml.
func TestEveryValueIsDocumentedInTheChartREADME(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values map[string]any
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(chartDir(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var leaves []string
	walk("", values, &leaves)
	sort.Strings(leaves)
	for _, p := range leaves {
		if !strings.Contains(string(readme), "`"+p+"`") {
			t.Errorf("values.yaml key %s is not documented in deploy/helm/pressure/README.md", p)
		}
	}
	if len(leaves) < 50 {
		t.Errorf("found only %d values; the walk is broken", len(leaves))
	}
	lines := strings.Split(string(raw), "\n")
	for i, l := range lines {
		trim := strings.TrimSpace(l)
		if trim == "" || strings.HasPrefix(trim, "#") || strings.HasPrefix(trim, "-") || !strings.Contains(trim, ":") {
			continue
		}
		if commented(lines, i) {
			continue
		}
		t.Errorf("values.yaml line %d %q has no comment on it, above it or above its parent", i+1, trim)
	}
}

func walk(prefix string, v any, out *[]string) {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		*out = append(*out, prefix)
		return
	}
	for k, child := range m {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		walk(p, child, out)
	}
}

// commented: the line has a trailing comment, the line above is a comment, or it is part of a
// block whose parent key (less indented, above) is commented.
func commented(lines []string, i int) bool {
	indent := len(lines[i]) - len(strings.TrimLeft(lines[i], " "))
	if strings.Contains(lines[i], " # ") || (i > 0 && strings.HasPrefix(strings.TrimSpace(lines[i-1]), "#")) {
		return true
	}
	for j := i - 1; j >= 0; j-- {
		l := lines[j]
		if strings.TrimSpace(l) == "" || strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if ind := len(l) - len(strings.TrimLeft(l, " ")); ind < indent {
			return commented(lines, j)
		}
	}
	return false
}

var metricName = regexp.MustCompile(`pressure_(agent|janitor)_[a-z_]+`)

// TestDashboardAndAlertsUseOnlyMetricsTheDaemonsRegister reads the metric names from the
// agent's and janitor's source, so a renamed metric breaks this test, not the dashboard.
func TestDashboardAndAlertsUseOnlyMetricsTheDaemonsRegister(t *testing.T) {
	root := repoRoot(t)
	var src strings.Builder
	for _, f := range []string{"internal/agent/metrics.go", "internal/janitor/metrics.go"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		src.Write(b)
	}
	registered := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(pressure_(agent|janitor)_[a-z_]+)"`).FindAllStringSubmatch(src.String(), -1) {
		registered[m[1]] = true
	}
	if len(registered) < 15 {
		t.Fatalf("found only %d registered metrics in the sources: %v", len(registered), registered)
	}
	dash, err := os.ReadFile(filepath.Join(chartDir(t), "dashboards", "pressure.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d map[string]any
	if err := yaml.Unmarshal(dash, &d); err != nil {
		t.Fatalf("dashboard JSON: %v", err)
	}
	alerts, err := os.ReadFile(filepath.Join(chartDir(t), "files", "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, f := range [][]byte{dash, alerts} {
		for _, loc := range metricName.FindAllIndex(f, -1) {
			m := string(f[loc[0]:loc[1]])
			if loc[1] < len(f) && f[loc[1]] == '(' { // a name regex, {__name__=~"pressure_x_(a|b)"}
				for _, alt := range strings.Split(string(f[loc[1]+1:loc[1]+bytes.IndexByte(f[loc[1]:], ')')]), "|") {
					used[m+alt] = true
				}
				continue
			}
			m = strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
			used[m] = true
		}
	}
	for m := range used {
		if !registered[m] {
			t.Errorf("dashboard or alerts use %s, which internal/agent and internal/janitor do not register", m)
		}
	}
	for m := range registered {
		if !used[m] {
			t.Errorf("metric %s is registered but on no dashboard panel or alert", m)
		}
	}
}

func TestPrometheusRuleCarriesTheAlertsOperatorsAskedFor(t *testing.T) {
	objs := objects(t, render(t, allValues))
	rule := find(t, objs, "PrometheusRule", "pressure-all")
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	var names []string
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			r := r.(map[string]any)
			names = append(names, r["alert"].(string))
			if r["expr"] == "" {
				t.Errorf("alert %v has no expression", r["alert"])
			}
		}
	}
	for _, want := range []string{"PressureNodeCloseToEvictionThreshold", "PressureEvictionLoop", "PressureEvictionsFailing", "PressureJanitorBacklog"} {
		if !slices.Contains(names, want) {
			t.Errorf("PrometheusRule alerts %v lack %s", names, want)
		}
	}
	if !strings.Contains(render(t, allValues), "< 1.5 * pressure_agent_signal_threshold") {
		t.Errorf("closeToThresholdFactor 1.5 from ci/all-values.yaml is not in the rendered rule")
	}
}

// number reads a numeric field of a decoded manifest (JSON numbers decode as float64 or int64).
func number(obj map[string]any, fields ...string) float64 {
	v, _, _ := unstructured.NestedFieldNoCopy(obj, fields...)
	switch n := v.(type) {
	case int64:
		return float64(n)
	case float64:
		return n
	}
	return -1
}

func podSpec(t testing.TB, o *unstructured.Unstructured) map[string]any {
	t.Helper()
	spec, ok, _ := unstructured.NestedMap(o.Object, "spec", "template", "spec")
	if !ok {
		t.Fatalf("%s/%s has no pod template", o.GetKind(), o.GetName())
	}
	return spec
}

func container(t testing.TB, o *unstructured.Unstructured) map[string]any {
	t.Helper()
	cs := podSpec(t, o)["containers"].([]any)
	if len(cs) != 1 {
		t.Fatalf("%s/%s has %d containers, want 1", o.GetKind(), o.GetName(), len(cs))
	}
	return cs[0].(map[string]any)
}

func strSlice(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		out = append(out, x.(string))
	}
	return out
}

func hasRule(role *unstructured.Unstructured, resource string) bool {
	rules, _, _ := unstructured.NestedSlice(role.Object, "rules")
	for _, r := range rules {
		if slices.Contains(strSlice(r.(map[string]any)["resources"]), resource) {
			return true
		}
	}
	return false
}
