package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	agentcfg "github.com/kube-pressure/pressure/internal/config/agent"
	janitorcfg "github.com/kube-pressure/pressure/internal/config/janitor"
)

// loadSchema reads values.schema.json as generic JSON.
func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(chartDir(t), "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("values.schema.json: %v", err)
	}
	return s
}

// TestValuesSchemaRejectsTyposAndAcceptsTheChartsValues: a misspelt key (agent.dryrun for
// agent.dryRun) would silently leave dry-run off and let the agent evict; helm must refuse it,
// at every level, and accept the defaults and ci/all-values.yaml.
func TestValuesSchemaRejectsTyposAndAcceptsTheChartsValues(t *testing.T) {
	for _, v := range []valuesFile{defaultValues, allValues} {
		if _, err := tryHelm(t, "lint", chartDir(t), "--strict", "-f", filepath.Join(chartDir(t), orDefault(v))); err != nil {
			t.Errorf("helm lint with %q: %v", v, err)
		}
		render(t, v) // fails the test on a schema error
	}
	for _, tc := range []struct{ set, at, key string }{
		{"agent.dryrun=true", "/agent", "dryrun"}, // the typo of the issue
		{"dryrun=false", "", "dryrun"},            // top level: the one switch of a first install
		{"agent.image.tags=v1", "/agent/image", "tags"},
		{"janitor.config.leaderElection.leaseNme=x", "/janitor/config/leaderElection", "leaseNme"}, // a config file field
		{"agent.config.notifiers.memcgg=true", "/agent/config/notifiers", "memcgg"},                // the agent's configuration file
		{"metrics.prometheusRule.closeToThreshold=2", "/metrics/prometheusRule", "closeToThreshold"},
		{"agent.resources.request.cpu=1", "/agent/resources", "request"},
	} {
		out, err := tryHelm(t, "template", releaseName, chartDir(t), "--namespace", releaseNS, "--kube-version", kubeVersion, "--set", tc.set)
		if err == nil {
			t.Errorf("helm template --set %s succeeded, want a schema error", tc.set)
			continue
		}
		if want := "at '" + tc.at + "': additional properties '" + tc.key + "' not allowed"; !strings.Contains(err.Error(), want) {
			t.Errorf("helm template --set %s: error lacks %q:\n%v%s", tc.set, want, err, out)
		}
	}
	for _, set := range []string{"agent.dryRun=yes", "janitor.replicas=two"} {
		if _, err := tryHelm(t, "template", releaseName, chartDir(t), "--namespace", releaseNS, "--kube-version", kubeVersion, "--set-string", set); err == nil {
			t.Errorf("helm template --set-string %s succeeded, want a type error", set)
		}
	}
}

func orDefault(v valuesFile) string {
	if v == "" {
		return "values.yaml"
	}
	return string(v)
}

// TestValuesSchemaClosesEveryChartObject walks the schema: every object the chart defines has
// additionalProperties false (free-form maps say what their values are; Kubernetes types passed
// through to the pod spec are marked with x-kubernetes-type and checked by the API server).
func TestValuesSchemaClosesEveryChartObject(t *testing.T) {
	var walk func(path string, s map[string]any)
	walk = func(path string, s map[string]any) {
		if s["type"] != "object" {
			return
		}
		if _, k8s := s["x-kubernetes-type"]; k8s {
			return
		}
		switch ap := s["additionalProperties"].(type) {
		case bool:
			if ap {
				t.Errorf("%s: additionalProperties true", path)
			}
		case map[string]any: // a map of one value type (labels, annotations, headroom)
			return
		default:
			t.Errorf("%s: no additionalProperties: a typo below it would be accepted", path)
		}
		props, _ := s["properties"].(map[string]any)
		for k, v := range props {
			walk(path+"."+k, v.(map[string]any))
		}
	}
	walk("", loadSchema(t))
}

// TestValuesSchemaConfigMatchesTheConfigurationTypes keeps agent.config and janitor.config in step
// with the configuration files' Go types, field by field.
func TestValuesSchemaConfigMatchesTheConfigurationTypes(t *testing.T) {
	props := loadSchema(t)["properties"].(map[string]any)
	for _, c := range []struct {
		component string
		typ       reflect.Type
	}{
		{"agent", reflect.TypeFor[agentcfg.AgentConfiguration]()},
		{"janitor", reflect.TypeFor[janitorcfg.JanitorConfiguration]()},
	} {
		got := props[c.component].(map[string]any)["properties"].(map[string]any)["config"]
		want := roundTrip(t, schemaOf(c.typ))
		if d := cmp.Diff(got, want); d != "" {
			js, _ := json.MarshalIndent(schemaOf(c.typ), "", "  ")
			t.Errorf("%s.config in values.schema.json differs from %s (-schema +type):\n%s\nwant:\n%s", c.component, c.typ, d, js)
		}
	}
}

func roundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	durationType = reflect.TypeFor[metav1.Duration]()
	quantityType = reflect.TypeFor[resource.Quantity]()
)

// schemaOf is the JSON schema of a configuration type: closed objects, durations as strings
// ("10s"), quantities as strings or integers ("4Gi", 1024), apiVersion and kind left out (the
// chart writes them).
func schemaOf(t reflect.Type) map[string]any {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return map[string]any{"type": "string"}
	case t == quantityType:
		return map[string]any{"type": []any{"string", "integer"}}
	case t.Kind() == reflect.Struct:
		props := map[string]any{}
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue // inline TypeMeta: apiVersion and kind come from the chart
			}
			props[name] = schemaOf(f.Type)
		}
		return map[string]any{"type": "object", "additionalProperties": false, "properties": props}
	case t.Kind() == reflect.Map:
		return map[string]any{"type": "object", "additionalProperties": schemaOf(t.Elem())}
	case t.Kind() == reflect.Slice:
		return map[string]any{"type": "array", "items": schemaOf(t.Elem())}
	case t.Kind() == reflect.Bool:
		return map[string]any{"type": "boolean"}
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return map[string]any{"type": "number"}
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return map[string]any{"type": "integer"}
	}
	return map[string]any{"type": "string"}
}
