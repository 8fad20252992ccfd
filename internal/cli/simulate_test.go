package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/golden"
)

// exampleScenario is the scenario of docs/simulate.md.
const exampleScenario = "../scenario/testdata/example.yaml"

func TestSimulateScenariosMatchGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"example.txt", []string{exampleScenario}},
		{"example.json", []string{exampleScenario, "-o", "json"}},
		{"example-kubelet-only.yaml", []string{exampleScenario, "--no-agent", "-o", "yaml"}},
		{"example-what-if.txt", []string{exampleScenario, "--set", "evictionHard.allocatableMemory.available=400Mi",
			"--set", "agent.headroom.allocatableMemory.available=0", "--set", "timing.firstSync=7s", "--seed", "2"}},
		{"step.txt", []string{"testdata/simulate/step.yaml"}},
		{"new-pod.txt", []string{"testdata/simulate/new-pod.yaml"}},
		{"soft.txt", []string{"testdata/simulate/soft.yaml"}},
		{"pdb.txt", []string{"testdata/simulate/pdb.yaml"}},
		{"pdb-soft.txt", []string{"testdata/simulate/pdb-soft.yaml"}},
		{"pdb-soft.json", []string{"testdata/simulate/pdb-soft.yaml", "-o", "json"}},
		{"pdb-no-delete.txt", []string{"testdata/simulate/pdb.yaml", "--set", "agent.eviction.allowDelete=false"}},
		{"avoid.txt", []string{"testdata/simulate/avoid.yaml"}},
		{"avoid.json", []string{"testdata/simulate/avoid.yaml", "-o", "json"}},
		{"avoid.yaml", []string{"testdata/simulate/avoid.yaml", "-o", "yaml"}},
		{"avoid-off.txt", []string{"testdata/simulate/avoid.yaml", "--set", "agent.loopBreaker.enabled=false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := runCLI(t, append([]string{"simulate"}, tc.args...)...)
			if err != nil {
				t.Fatalf("simulate %v: %v", tc.args, err)
			}
			golden.Check(t, filepath.Join("testdata", "simulate", "golden", tc.name), got)
		})
	}
}

func TestSimulatePlotMatchesGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plot.svg")
	if _, err := runCLI(t, "simulate", "testdata/simulate/step.yaml", "--plot", path); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "simulate", "golden", "step.svg"), string(svg))
}

func TestTheSameSeedGivesTheSameTraceByteForByte(t *testing.T) {
	run := func(seed string) (string, string) {
		path := filepath.Join(t.TempDir(), "plot.svg")
		out, err := runCLI(t, "simulate", exampleScenario, "-o", "json", "--seed", seed, "--plot", path)
		if err != nil {
			t.Fatal(err)
		}
		svg, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return out, string(svg)
	}
	a, asvg := run("5")
	b, bsvg := run("5")
	if a != b || asvg != bsvg {
		t.Errorf("seed 5 twice: the JSON traces are equal: %v, the plots: %v", a == b, asvg == bsvg)
	}
	if c, _ := run("6"); c == a {
		t.Errorf("seeds 5 and 6 gave the same trace: the seed does not reach the model")
	}
}

func TestSimulateErrorsNameTheCulprit(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("node: {memory: 8Gi}\nkubelet:\n  evictionHard: {memory.available: lots}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	agentBad := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(agentBad, []byte("apiVersion: pressure.kube-pressure.io/v1alpha1\nkind: AgentConfiguration\npolicy: eager\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"an unknown kubelet field", []string{exampleScenario, "--set", "evictionHrad.memory.available=1Gi"},
			`--set evictionHrad.memory.available=1Gi: unknown KubeletConfiguration field "evictionHrad" (did you mean "evictionHard"?)`},
		{"an unknown eviction signal", []string{exampleScenario, "--set", "evictionHard.memory.availble=1Gi"},
			`--set evictionHard.memory.availble=1Gi: unknown eviction signal "memory.availble" in evictionHard`},
		{"a value the kubelet refuses", []string{exampleScenario, "--set", "evictionHard.memory.available=lots"},
			`--set evictionHard.memory.available=lots: evictionHard["memory.available"]: value "lots"`},
		{"a scalar set as a map", []string{exampleScenario, "--set", "kernelMemcgNotification.x=true"},
			`--set kernelMemcgNotification.x=true: "kernelMemcgNotification" is a single value, not a group`},
		{"a bad boolean", []string{exampleScenario, "--set", "kernelMemcgNotification=maybe"},
			"--set kernelMemcgNotification=maybe: want true or false"},
		{"an unknown timing", []string{exampleScenario, "--set", "timing.housekeepin=5s"},
			`--set timing.housekeepin=5s: unknown timing field "housekeepin" (did you mean "housekeeping"?)`},
		{"an unknown agent field", []string{exampleScenario, "--set", "agent.headrom.memory.available=1Mi"},
			`--set agent.headrom.memory.available=1Mi: unknown AgentConfiguration field "headrom" (did you mean "headroom"?)`},
		{"no =", []string{exampleScenario, "--set", "evictionHard"}, `--set "evictionHard": want KEY=VALUE`},
		{"a step too small", []string{exampleScenario, "--set", "timing.step=1ms"}, "timing.step 1ms: at least 10ms"},
		{"an agent sync below a step", []string{exampleScenario, "--set", "timing.housekeeping=1ms"},
			"timing.housekeeping 1ms: at least timing.step 100ms"},
		{"too many steps", []string{exampleScenario, "--set", "timing.step=10ms", "--set", "timing.podStatsInterval=1ms"},
			"timing.podStatsInterval 1ms"},
		{"a scenario's bad threshold", []string{bad}, bad + `: line 3, column 36: field kubelet.evictionHard.memory.available: value "lots"`},
		{"a bad agent configuration", []string{exampleScenario, "--agent-config", agentBad}, `policy`},
		{"a missing kubelet configuration", []string{exampleScenario, "--kubelet-config", bad + ".missing"}, "--kubelet-config: open"},
		{"an output format", []string{exampleScenario, "-o", "xml"}, `--output "xml": unknown format; want one of text, wide, json, yaml,`},
		{"a directory without snapshots", []string{t.TempDir()}, "no snapshot directories"},
		{"a missing scenario", []string{bad + ".missing"}, "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plot := filepath.Join(t.TempDir(), "plot.svg")
			_, err := runCLI(t, append(append([]string{"simulate"}, tc.args...), "--plot", plot)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
			if _, statErr := os.Stat(plot); !os.IsNotExist(statErr) {
				t.Errorf("a failed simulate wrote its plot (stat: %v)", statErr)
			}
		})
	}
}
