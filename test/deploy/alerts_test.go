package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// githubAnchors returns the anchors GitHub gives the headings of a Markdown file: lower case, spaces
// to hyphens, punctuation other than hyphens and underscores dropped.
func githubAnchors(markdown string) map[string]bool {
	drop := regexp.MustCompile(`[^a-z0-9 _-]`)
	out := map[string]bool{}
	for _, l := range strings.Split(markdown, "\n") {
		if h := strings.TrimLeft(l, "#"); h != l && strings.HasPrefix(h, " ") {
			out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")] = true
		}
	}
	return out
}

type alertRule struct {
	name, expr  string
	annotations map[string]string
}

func renderedAlerts(t *testing.T) []alertRule {
	t.Helper()
	rule := find(t, objects(t, render(t, allValues)), "PrometheusRule", "pressure-all")
	groups, _, _ := unstructured.NestedSlice(rule.Object, "spec", "groups")
	var out []alertRule
	for _, g := range groups {
		for _, r := range g.(map[string]any)["rules"].([]any) {
			r := r.(map[string]any)
			a := alertRule{name: r["alert"].(string), expr: r["expr"].(string), annotations: map[string]string{}}
			ann, _ := r["annotations"].(map[string]any)
			for k, v := range ann {
				a.annotations[k], _ = v.(string)
			}
			out = append(out, a)
		}
	}
	if len(out) < 10 {
		t.Fatalf("only %d alerts rendered", len(out))
	}
	return out
}

// TestEveryAlertHasARunbookSectionInOperationsDoc checks every alert's runbook_url is the configured
// base URL plus an anchor that docs/operations.md has.
func TestEveryAlertHasARunbookSectionInOperationsDoc(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := githubAnchors(string(doc))
	const base = "https://runbooks.example.com/pressure/operations.md#" // ci/all-values.yaml
	for _, a := range renderedAlerts(t) {
		url := a.annotations["runbook_url"]
		anchor, ok := strings.CutPrefix(url, base)
		if !ok {
			t.Errorf("alert %s: runbook_url %q, want %s<anchor>", a.name, url, base)
			continue
		}
		if !anchors[anchor] {
			t.Errorf("alert %s: runbook_url anchor #%s is no heading of docs/operations.md", a.name, anchor)
		}
		if anchor != strings.ToLower(a.name) {
			t.Errorf("alert %s: runbook anchor #%s, want #%s (its section)", a.name, anchor, strings.ToLower(a.name))
		}
	}
}

// TestAlertsThatNameTheNodeKeepTheNodeLabel checks that an alert whose text names
// {{ $labels.node }} reads the agent's series, which carry node themselves (no scrape relabelling
// needed), and does not aggregate the label away. Text that names the node only when the label is
// there ({{ with $labels.node }}...{{ end }}, for `up`) needs neither.
func TestAlertsThatNameTheNodeKeepTheNodeLabel(t *testing.T) {
	by := regexp.MustCompile(`\b(sum|max|min|avg|count)\s+by\s*\(([^)]*)\)`)
	optional := regexp.MustCompile(`\{\{\s*with \$labels\.node\s*\}\}.*?\{\{\s*end\s*\}\}`)
	for _, a := range renderedAlerts(t) {
		if !strings.Contains(optional.ReplaceAllString(a.annotations["summary"]+a.annotations["description"], ""), "$labels.node") {
			continue
		}
		for _, m := range by.FindAllStringSubmatch(a.expr, -1) {
			if !regexp.MustCompile(`\bnode\b`).MatchString(m[2]) {
				t.Errorf("alert %s names $labels.node but %q drops it", a.name, m[0])
			}
		}
		if !strings.Contains(a.expr, "pressure_agent_") {
			t.Errorf("alert %s names $labels.node but reads no agent series (only they carry node without a relabelling): %s",
				a.name, a.expr)
		}
	}
}

// TestAgentAlertsCoverAMissingAgent checks there is an alert for an agent that cannot be scraped and
// one for no agent target at all, on the job of the chart's agent Service.
func TestAgentAlertsCoverAMissingAgent(t *testing.T) {
	want := map[string]string{
		"PressureAgentDown":   `up{job="pressure-all-agent-metrics", namespace="pressure-system"} == 0`,
		"PressureAgentAbsent": `absent(up{job="pressure-all-agent-metrics", namespace="pressure-system"})`,
	}
	for _, a := range renderedAlerts(t) {
		if w, ok := want[a.name]; ok {
			if strings.TrimSpace(a.expr) != w {
				t.Errorf("alert %s: expr %q, want %q", a.name, a.expr, w)
			}
			delete(want, a.name)
		}
	}
	for name := range want {
		t.Errorf("no alert %s", name)
	}
}
