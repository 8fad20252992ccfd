package deploy

// The chart's one dry-run switch (issue 34, item 2): top-level dryRun, on by default, under which the
// agent evicts nothing, the janitor deletes nothing and the avoidance MutatingAdmissionPolicy is not
// rendered, so no pod is mutated.

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// dryRunOf reads dryRun from the configuration file of the ConfigMap name.
func dryRunOf(t *testing.T, objs []*unstructured.Unstructured, name string) bool {
	t.Helper()
	var cfg struct {
		DryRun *bool `json:"dryRun"`
	}
	if err := yaml.Unmarshal([]byte(configFile(t, objs, name)), &cfg); err != nil {
		t.Fatalf("ConfigMap %s: %v", name, err)
	}
	if cfg.DryRun == nil {
		t.Fatalf("ConfigMap %s: the configuration does not say dryRun", name)
	}
	return *cfg.DryRun
}

// mutating returns the rendered MutatingAdmissionPolicy objects and the Roles that let the agent write
// avoidance ConfigMaps, as Kind/name.
func mutating(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		k := o.GetKind()
		if strings.HasPrefix(k, "MutatingAdmissionPolicy") || strings.HasPrefix(k, "MutatingWebhook") ||
			(k == "Role" && hasRule(o, "configmaps")) {
			out = append(out, k+"/"+o.GetName())
		}
	}
	return out
}

func TestDryRunIsOneSwitchThatMutatesNothing(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		set                  []string
		agentDry, janitorDry bool
	}{
		{"the defaults are a dry run of both components, without the avoidance policy", nil, true, true},
		{"dryRun=false: both act and the avoidance policy is rendered", []string{live}, false, false},
		{"dryRun=false, agent.dryRun=true: the agent alone is dry, and no policy mutates pods for it",
			[]string{live, "agent.dryRun=true"}, true, false},
		{"dryRun=false, janitor.config.dryRun=true: the janitor alone is dry", []string{live, "janitor.config.dryRun=true"}, false, true},
		{"dryRun=false, agent.config.dryRun=true: the configuration field is a dry run too",
			[]string{live, "agent.config.dryRun=true"}, true, false},
		{"dryRun=true wins over agent.config.dryRun=false and janitor.config.dryRun=false",
			[]string{"dryRun=true", "agent.config.dryRun=false", "janitor.config.dryRun=false"}, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := objects(t, render(t, defaultValues, tc.set...))
			if got := dryRunOf(t, objs, "pressure-agent"); got != tc.agentDry {
				t.Errorf("agent dryRun %v, want %v", got, tc.agentDry)
			}
			if got := dryRunOf(t, objs, "pressure-janitor"); got != tc.janitorDry {
				t.Errorf("janitor dryRun %v, want %v", got, tc.janitorDry)
			}
			got := mutating(objs)
			if tc.agentDry && len(got) != 0 {
				t.Errorf("a dry-run agent comes with %v; want no mutating policy and no avoidance ConfigMap rights", got)
			}
			if !tc.agentDry && len(got) != 3 {
				t.Errorf("a live agent on 1.36 comes with %v; want the avoidance policy, its binding and the agent's Role", got)
			}
			if cfg := configFile(t, objs, "pressure-agent"); strings.Contains(cfg, "avoidanceNamespace") == tc.agentDry {
				t.Errorf("agent dry %v, its configuration names an avoidance namespace: %v\n%s", tc.agentDry, !tc.agentDry, cfg)
			}
		})
	}
}

func TestDryRunRefusesExtraArgsThatTurnItOff(t *testing.T) {
	for _, tc := range []struct{ set, want string }{
		{"agent.extraArgs={--dry-run=false}", `agent.extraArgs "--dry-run=false" turns the agent's dry-run off`},
		{"janitor.extraArgs={-dry-run=False}", `janitor.extraArgs "-dry-run=False" turns the janitor's dry-run off`},
	} {
		out, err := tryHelm(t, "template", releaseName, chartDir(t), "--namespace", releaseNS, "--kube-version", kubeVersion, "--set", tc.set)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("helm template --set %s: %v, want an error saying %q\n%s", tc.set, err, tc.want, out)
		}
	}
	// Live, the same flag is the operator's business.
	render(t, defaultValues, live, "agent.extraArgs={--dry-run=false}")
}
