package scenario

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/sim"
	"github.com/kube-pressure/pressure/internal/threshold"
)

const mi = 1 << 20

func parse(t *testing.T, text string) (*Scenario, error) {
	t.Helper()
	return Parse(strings.NewReader(text), "s.yaml")
}

func TestTheExampleScenarioOfTheDocsParses(t *testing.T) {
	f, err := os.Open("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f, "testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Node != "example" || s.Memory != 8<<30 || s.Duration != 3*time.Minute || s.Seed != 1 || s.Timing.FirstSync != 3*time.Second {
		t.Errorf("node %q memory %d duration %s seed %d firstSync %s", s.Node, s.Memory, s.Duration, s.Seed, s.Timing.FirstSync)
	}
	var got []string
	for _, p := range s.Pods {
		got = append(got, p.Candidate.Namespace+"/"+p.Candidate.Name+" "+p.Candidate.QOSClass)
	}
	want := []string{"default/leaky Burstable", "default/batch BestEffort", "default/web Guaranteed", "default/late Burstable",
		"kube-system/node-agent BestEffort"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods (-want +got):\n%s", diff)
	}
	leaky := s.Pods[0]
	if diff := cmp.Diff(sim.Ramp{Start: 100 * mi, Rate: 20 * mi, Until: 1800 * mi}, leaky.Usage); diff != "" || leaky.Limit != 2<<30 {
		t.Errorf("leaky usage (-want +got):\n%s limit %d", diff, leaky.Limit)
	}
	if !s.Pods[4].Candidate.Critical {
		t.Errorf("node-agent (priority 2000001000) is not critical")
	}
	cfg, err := threshold.ParseConfig(s.Kubelet.ThresholdInput())
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Model(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m.PodsCapacity != 2<<30 {
		t.Errorf("pods cgroup limit %d, want 8Gi − kubeReserved 6Gi = 2Gi", m.PodsCapacity)
	}
}

func TestScenarioValues(t *testing.T) {
	s, err := parse(t, `
node: {memory: 4Gi, systemUsage: {start: 1Gi, rate: -1Mi/s, until: 512Mi}}
timing: {syncDuration: 150ms, podKill: 1s, podStatsInterval: 5s, podStatsMaxInterval: 5s}
pods:
- {name: a, usage: 100Mi}
- {name: b, usage: {start: 1Gi, rate: 3Gi/m, until: 2Gi, after: 5s}, start: 10s}
- {name: c, requests: {memory: 1Gi, cpu: "1"}, limits: {memory: 1Gi, cpu: 1000m}, priority: -5, terminationGracePeriodSeconds: 7}
- {name: d, namespace: kube-system, critical: static}
- {name: e, limits: {memory: 64Mi}, owner: Deployment/web}
`)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(sim.Ramp{Start: 1 << 30, Rate: -mi, Until: 512 * mi}, s.System); diff != "" {
		t.Errorf("system usage (-want +got):\n%s", diff)
	}
	b := s.Pods[1]
	if diff := cmp.Diff(sim.Ramp{Start: 1 << 30, Rate: 3 << 30 / 60, Until: 2 << 30, After: 5 * time.Second}, b.Usage); diff != "" || b.Start != 10*time.Second {
		t.Errorf("b (-want +got):\n%s start %s", diff, b.Start)
	}
	c := s.Pods[2].Candidate
	if c.QOSClass != rank.QOSGuaranteed || c.Priority != -5 || *c.TerminationGracePeriodSeconds != 7 || c.MemoryRequest != 1<<30 {
		t.Errorf("c: %+v", c)
	}
	if d := s.Pods[3].Candidate; !d.Critical || d.CriticalReason != "static pod" {
		t.Errorf("d: critical %v %q", d.Critical, d.CriticalReason)
	}
	if e := s.Pods[4]; e.Candidate.QOSClass != rank.QOSBurstable || e.Candidate.MemoryRequest != 64*mi || e.Limit != 64*mi {
		t.Errorf("e (a limit without request: the request defaults to it; no cpu: Burstable): %+v", e)
	}
	if e := s.Pods[4].Candidate; e.OwnerKind != "Deployment" || e.OwnerName != "web" {
		t.Errorf("e's owner: %q/%q, want Deployment/web", e.OwnerKind, e.OwnerName)
	}
	if s.Duration != DefaultDuration || s.Node != DefaultNodeName {
		t.Errorf("defaults: duration %s node %q", s.Duration, s.Node)
	}
	if s.Timing.SyncDuration != 150*time.Millisecond || s.Timing.PodKill != time.Second || s.PodStatsInterval != 5*time.Second ||
		s.PodStatsMaxInterval != 5*time.Second || s.Timing.Housekeeping != 10*time.Second {
		t.Errorf("timing %+v, pod stats %s-%s", s.Timing, s.PodStatsInterval, s.PodStatsMaxInterval)
	}
}

func TestBadScenariosNameTheLineTheFieldAndTheValue(t *testing.T) {
	for _, tc := range []struct {
		name, text, want string
	}{
		{"memory is required", "pods: []\nnode: {}\n", "s.yaml: line 2, column 7: field node.memory: required"},
		{"a bad quantity", "node:\n  memory: 8Gb\n", `s.yaml: line 2, column 11: field node.memory: value "8Gb": want a quantity of bytes`},
		{"a rate without a unit of time", "node: {memory: 8Gi}\npods:\n- name: a\n  usage: {rate: 50Mi}\n",
			`s.yaml: line 4, column 17: field pods[0].usage.rate: value "50Mi": want a rate like 50Mi/s`},
		{"an unknown field", "node: {memory: 8Gi}\npods:\n- name: a\n  usuage: 1Gi\n",
			`s.yaml: line 4, column 3: field pods[0].usuage: unknown field (did you mean "usage"?)`},
		{"an unknown top-level field", "node: {memory: 8Gi}\nkublet: {}\n", "line 2, column 1: field kublet: unknown field"},
		{"a duplicate pod", "node: {memory: 8Gi}\npods:\n- {name: a}\n- {name: a}\n",
			"line 4, column 3: field pods[1].name: pod default/a is also pods[0]"},
		{"a QoS the resources do not give", "node: {memory: 8Gi}\npods:\n- {name: a, qos: Guaranteed, limits: {memory: 1Gi}}\n",
			`line 3, column 18: field pods[0].qos: value "Guaranteed": the requests and limits give Burstable`},
		{"a request above the limit", "node: {memory: 8Gi}\npods:\n- {name: a, requests: {memory: 2Gi}, limits: {memory: 1Gi}}\n",
			"field pods[0].requests.memory: request 2147483648 above limit 1073741824"},
		{"a negative duration", "node: {memory: 8Gi}\nduration: -1m\n", `line 2, column 11: field duration: value "-1m": must not be negative`},
		{"a growing ramp that ends below its start", "node: {memory: 8Gi}\npods:\n- {name: a, usage: {start: 1Gi, rate: 1Mi/s, until: 1Mi}}\n",
			"field pods[0].usage.until: value \"1Mi\": below start 1Gi"},
		{"an unknown kubelet field", "node: {memory: 8Gi}\nkubelet:\n  evictionHrad: {memory.available: 1Gi}\n",
			`line 3, column 3: field kubelet.evictionHrad: unknown field (did you mean "evictionHard"?)`},
		{"a kubelet field of the wrong type", "node: {memory: 8Gi}\nkubelet:\n  evictionMaxPodGracePeriod: soon\n",
			"line 3, column 30: field kubelet.evictionMaxPodGracePeriod: value \"soon\": "},
		{"an unknown agent field", "node: {memory: 8Gi}\nagent: {headroon: {}}\n", "line 2, column 9: field agent.headroon: unknown field"},
		{"a critical that is not static or mirror", "node: {memory: 8Gi}\npods:\n- {name: a, critical: yes}\n",
			`field pods[0].critical: value "yes": want static or mirror`},
		{"an owner without a kind", "node: {memory: 8Gi}\npods:\n- {name: a, owner: web}\n",
			`s.yaml: line 3, column 20: field pods[0].owner: value "web": want KIND/NAME in the pod's namespace, e.g. Deployment/web`},
		{"an owner with a namespace", "node: {memory: 8Gi}\npods:\n- {name: a, owner: Deployment/ns/web}\n",
			`field pods[0].owner: value "Deployment/ns/web": want KIND/NAME`},
		{"a timing below 10ms", "node: {memory: 8Gi}\ntiming: {step: 1ms}\n", "field timing.step: value \"1ms\": below 10ms"},
		{"a housekeeping below the step", "node: {memory: 8Gi}\ntiming: {housekeeping: 1ms}\n",
			"field timing: timing.housekeeping 1ms: at least timing.step 100ms"},
		{"too many steps", "node: {memory: 8Gi}\nduration: 24h\ntiming: {step: 10ms}\n", "8640000 steps in 24h0m0s, at most 2000000"},
		{"pod stats too often", "node: {memory: 8Gi}\ntiming: {podStatsInterval: 1ns}\n", "field timing.podStatsInterval: value \"1ns\": below 100ms"},
		{"two documents", "node: {memory: 8Gi}\n---\nnode: {memory: 1Gi}\n", "line 2, column 1: a second YAML document"},
		{"not YAML", "node: [\n", "s.yaml: not YAML"},
		{"empty", "", "s.yaml: empty file"},
		{"a list where a mapping is wanted", "node: [1, 2]\n", "line 1, column 7: field node: want a mapping"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestEveryProblemIsReported(t *testing.T) {
	_, err := parse(t, "node: {memory: 8Gb}\nduration: soon\npods:\n- {usage: 1Gi}\n")
	for _, want := range []string{"node.memory", "duration", "pods[0].name: required"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
	var se *Error
	if !errors.As(err, &se) {
		t.Errorf("errors.As(%v, *Error) failed", err)
	}
}

func TestKubeletSettingErrorsAreLocatedInTheScenario(t *testing.T) {
	s, err := parse(t, "node: {memory: 8Gi}\nkubelet:\n  evictionHard:\n    memory.available: lots\n")
	if err != nil {
		t.Fatal(err)
	}
	_, err = threshold.ParseConfig(s.Kubelet.ThresholdInput())
	got := s.Locate(err)
	want := `s.yaml: line 4, column 23: field kubelet.evictionHard.memory.available: value "lots": `
	if got == nil || !strings.HasPrefix(got.Error(), want) {
		t.Errorf("located error %v, want it to start with %q", got, want)
	}
}

func TestAliasesAreExpandedWithinABound(t *testing.T) {
	_, err := parse(t, "node: {memory: 8Gi}\nkubelet:\n  kubeReserved: &r {memory: 1Gi}\n  systemReserved: *r\n")
	if err != nil {
		t.Errorf("an alias in the kubelet section: %v", err)
	}
	var b strings.Builder
	b.WriteString("node: {memory: 8Gi}\nkubelet:\n  featureGates: &a0 {x: true}\n")
	for i := 1; i < 12; i++ {
		b.WriteString(strings.Repeat(" ", 2) + "x" + string(rune('a'+i)) + ": &a" + string(rune('a'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			if i == 1 {
				b.WriteString("*a0")
			} else {
				b.WriteString("*a" + string(rune('a'+i-1)))
			}
		}
		b.WriteString("]\n")
	}
	if _, err := parse(t, b.String()); err == nil {
		t.Errorf("an exponential alias bomb parsed")
	}
}

func TestTheDocsShowTheExampleScenario(t *testing.T) {
	doc, err := os.ReadFile("../../docs/simulate.md")
	if err != nil {
		t.Fatal(err)
	}
	example, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```yaml\n"+string(example)+"```\n") {
		t.Errorf("docs/simulate.md does not show testdata/example.yaml verbatim in a yaml block: update one from the other")
	}
}
