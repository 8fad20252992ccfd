package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// The configuration is written down in five places besides its type: SetDefaults, docs/agent-config.md,
// the chart's values.schema.json (agent.config), the chart's ConfigMap template (the fields the chart
// sets itself) and the chart's values files (agent.config). The tests below fail when one of them names
// a field the type does not have, or leaves out one it has; TestTheDocumentedDefaultsAreTheCode
// (docs_test.go) compares the documented defaults with SetDefaults'.

var chartDir = filepath.Join("..", "..", "..", "deploy", "helm", "pressure")

// typeFields are the JSON paths of AgentConfiguration's fields, apiVersion and kind left out.
func typeFields() map[string]bool {
	out := map[string]bool{}
	for _, f := range jsonFields(reflect.TypeOf(AgentConfiguration{}), "") {
		out[f] = true
	}
	return out
}

// compareFields reports the fields of the type that got lacks and the paths of got that are no field.
func compareFields(t *testing.T, where string, got map[string]bool) {
	t.Helper()
	want := typeFields()
	for _, f := range sortedSet(want) {
		if !got[f] {
			t.Errorf("%s lacks the field %s of %s", where, f, reflect.TypeOf(AgentConfiguration{}))
		}
	}
	for _, f := range sortedSet(got) {
		if !want[f] {
			t.Errorf("%s has %s, which is no field of %s", where, f, reflect.TypeOf(AgentConfiguration{}))
		}
	}
}

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestTheDocsTableHasOneRowPerField: docs/agent-config.md's field table has exactly one row for each
// field of the type (apiVersion and kind besides), and a field without a documented default ("—") is
// one whose default is empty (nodeName, required).
func TestTheDocsTableHasOneRowPerField(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsDir, "agent-config.md"))
	if err != nil {
		t.Fatal(err)
	}
	code := defaultsByField(t)
	rows := map[string]bool{}
	for _, row := range docTable(t, string(data), "| Field |") {
		field := strings.Trim(row[0], "`")
		if field == "apiVersion" || field == "kind" {
			continue
		}
		if rows[field] {
			t.Errorf("docs/agent-config.md: two rows for `%s`", field)
		}
		rows[field] = true
		if len(row) >= 3 && strings.HasPrefix(row[2], "—") && code[field] != "" {
			t.Errorf("docs/agent-config.md: `%s` documents no default, the code's is %q", field, code[field])
		}
	}
	compareFields(t, "docs/agent-config.md's field table", rows)
}

// TestTheChartSchemaHasEveryField: values.schema.json's agent.config names every field of the type and
// no other (the chart's helm tests in test/deploy compare the types too; this one needs no helm).
func TestTheChartSchemaHasEveryField(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	cfg, ok := lookup(s, "properties", "agent", "properties", "config").(map[string]any)
	if !ok {
		t.Fatal("values.schema.json has no properties.agent.properties.config")
	}
	got := map[string]bool{}
	var walk func(prefix string, s map[string]any)
	walk = func(prefix string, s map[string]any) {
		props, ok := s["properties"].(map[string]any)
		if !ok { // a leaf, or a map of one value type (headroom)
			got[strings.TrimSuffix(prefix, ".")] = true
			return
		}
		for k, v := range props {
			walk(prefix+k+".", v.(map[string]any))
		}
	}
	walk("", cfg)
	compareFields(t, "values.schema.json's agent.config", got)
}

func lookup(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// TestTheChartsConfigMapSetsOnlyFields: every field the chart's ConfigMap template sets itself (`set
// $cfg "field" value`, nested `dict`s included) is a field of the type.
func TestTheChartsConfigMapSetsOnlyFields(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir, "templates", "agent-configmap.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	paths := templatePaths(t, string(data))
	if len(paths) < 10 {
		t.Fatalf("found %d fields set by the template, want the dozen it sets (its format changed?): %v", len(paths), paths)
	}
	fields := typeFields()
	for _, p := range paths {
		if !fields[p] && p != "apiVersion" && p != "kind" {
			t.Errorf("templates/agent-configmap.yaml sets %s, which is no field of %s", p, reflect.TypeOf(AgentConfiguration{}))
		}
	}
}

var setCfg = regexp.MustCompile(`set \$cfg ("[^"]*" .*?)\s*}}`)

// templatePaths returns the field paths the template sets on $cfg, sorted.
func templatePaths(t *testing.T, tmpl string) []string {
	t.Helper()
	seen := map[string]bool{}
	for _, m := range setCfg.FindAllStringSubmatch(tmpl, -1) {
		toks := tokens(m[1])
		var walk func(prefix string, toks []string) []string
		// walk reads one value: a parenthesised dict is a nested object; anything else is a leaf.
		walk = func(prefix string, toks []string) []string {
			if len(toks) >= 2 && toks[0] == "(" && toks[1] == "dict" {
				toks = toks[2:]
				for len(toks) > 0 && toks[0] != ")" {
					key := strings.Trim(toks[0], `"`)
					toks = walk(prefix+key+".", toks[1:])
				}
				return toks[min(1, len(toks)):]
			}
			seen[strings.TrimSuffix(prefix, ".")] = true
			return skipValue(toks)
		}
		walk(strings.Trim(toks[0], `"`)+".", toks[1:])
	}
	return sortedSet(seen)
}

// skipValue drops one template value (a word, a string or a parenthesised pipeline) from toks.
func skipValue(toks []string) []string {
	if len(toks) == 0 {
		return toks
	}
	if toks[0] != "(" {
		return toks[1:]
	}
	depth := 0
	for i, tok := range toks {
		switch tok {
		case "(":
			depth++
		case ")":
			depth--
			if depth == 0 {
				return toks[i+1:]
			}
		}
	}
	return nil
}

var token = regexp.MustCompile(`"[^"]*"|[()]|[^\s()"]+`)

func tokens(s string) []string { return token.FindAllString(s, -1) }

// TestTheChartsValuesConfigsAreValid: agent.config in values.yaml and ci/all-values.yaml names only
// fields of the type and, written into a file as the chart writes it, loads strictly and validates.
func TestTheChartsValuesConfigsAreValid(t *testing.T) {
	for _, name := range []string{"values.yaml", filepath.Join("ci", "all-values.yaml")} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(chartDir, name))
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := yaml.Unmarshal(data, &v); err != nil {
				t.Fatal(err)
			}
			cfg, ok := lookup(v, "agent", "config").(map[string]any)
			if !ok {
				t.Fatalf("%s has no agent.config map", name)
			}
			cfg["apiVersion"], cfg["kind"] = APIVersion, Kind
			if _, ok := cfg["nodeName"]; !ok {
				cfg["nodeName"] = "node-a"
			}
			file, err := yaml.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Load(strings.NewReader(string(file)), name+" agent.config")
			if err == nil {
				_, err = Complete(c, name+" agent.config")
			}
			if err != nil {
				t.Errorf("%s: agent.config does not load as an %s: %v", name, Kind, err)
			}
		})
	}
}

func TestTheTemplateParserFindsNestedFields(t *testing.T) {
	tmpl := `{{- $_ := set $cfg "procRoot" "/proc" }}
{{- $_ := set $cfg "eviction" (dict "allowCgroupKill" $a.cgroupKill.enabled) }}
{{- $_ := set $cfg "reclaim" (dict "action" (dict "enabled" true)) }}
{{- $_ := set $cfg "loopBreaker" (dict "avoidanceNamespace" .Release.Namespace "avoidanceNamePrefix" (printf "%s-avoid-" (include "x" .))) }}`
	got := templatePaths(t, tmpl)
	want := []string{"eviction.allowCgroupKill", "loopBreaker.avoidanceNamePrefix", "loopBreaker.avoidanceNamespace",
		"procRoot", "reclaim.action.enabled"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("templatePaths = %v, want %v", got, want)
	}
}

// TestTheChartsPortsAreTheDefaultAddresses: the chart writes metricsBindAddress and
// healthProbeBindAddress from agent.ports; by default they are the configuration's own defaults.
func TestTheChartsPortsAreTheDefaultAddresses(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(chartDir, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ port, address string }{
		{"metrics", DefaultMetricsBindAddress},
		{"health", DefaultHealthProbeBindAddress},
	} {
		got := fmt.Sprintf(":%v", lookup(v, "agent", "ports", tc.port))
		if got != tc.address {
			t.Errorf("values.yaml agent.ports.%s gives %q, the configuration's default is %q", tc.port, got, tc.address)
		}
	}
}
