package deploy

import (
	"strings"
	"testing"
)

// TestJanitorGOMEMLIMITIsDerivedFromItsMemoryLimit: the janitor's Go heap limit follows
// janitor.resources.limits.memory (janitor.goMemLimitPercent of it), and a limit the template
// cannot convert fails the render instead of shipping a wrong GOMEMLIMIT.
func TestJanitorGOMEMLIMITIsDerivedFromItsMemoryLimit(t *testing.T) {
	tests := []struct {
		name string
		set  []string
		want string // "" = no GOMEMLIMIT
	}{
		{name: "default 256Mi limit gives 90 percent of it", want: "241591910"},
		{name: "a 1Gi limit gives 90 percent of 1Gi", set: []string{"janitor.resources.limits.memory=1Gi"}, want: "966367641"},
		{name: "decimal suffix", set: []string{"janitor.resources.limits.memory=500M", "janitor.goMemLimitPercent=80"}, want: "400000000"},
		{name: "plain bytes", set: []string{"janitor.resources.limits.memory=268435456"}, want: "241591910"},
		{name: "percent 0 sets none", set: []string{"janitor.goMemLimitPercent=0"}},
		{name: "no memory limit sets none", set: []string{"janitor.resources.limits.memory=null"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dep := find(t, objects(t, render(t, defaultValues, tc.set...)), "Deployment", "pressure-janitor")
			var got string
			if env, ok := container(t, dep)["env"].([]any); ok {
				for _, e := range env {
					if m := e.(map[string]any); m["name"] == "GOMEMLIMIT" {
						got = m["value"].(string)
					}
				}
			}
			if got != tc.want {
				t.Errorf("GOMEMLIMIT = %q; want %q", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"janitor.resources.limits.memory=0.5Gi", "janitor.goMemLimitPercent=150"} {
		out, err := tryHelm(t, "template", releaseName, chartDir(t), "--namespace", releaseNS, "--kube-version", kubeVersion, "--set", bad)
		if err == nil || !strings.Contains(out+err.Error(), "janitor.") {
			t.Errorf("--set %s: rendered without an error naming the value (err %v):\n%.300s", bad, err, out)
		}
	}
}
