package scenario

import (
	"math/rand"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/sim"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// FuzzParse: no panic; an error names the file, or the scenario is valid (a node with memory, a
// positive duration, named and unique pods, non-negative amounts) and simulates without panicking.
func FuzzParse(f *testing.F) {
	example, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(example))
	f.Add("node: {memory: 1Gi}\npods:\n- {name: a, usage: {start: 1Mi, rate: -1Gi/s}}\n")
	f.Add("node: {memory: 1}\nkubelet: {evictionHard: {memory.available: 100%}}\n")
	f.Add("node: &n {memory: 2Gi}\npods: [*n]\n")
	f.Add("node: {memory: 1Gi}\npods:\n- {name: a, owner: Deployment/web}\n- {name: b, owner: /, start: 1s}\n")
	f.Fuzz(checkParse)
}

// TestParseHoldsOnMutatedExamples runs FuzzParse's check on 3000 seeded mutations of the example
// (lines dropped, duplicated or swapped, bytes changed, numbers and units replaced): the fuzzing
// engine runs slowly on this binary (it links the Kubernetes API types), so this gives the invariant
// many inputs in every test run.
func TestParseHoldsOnMutatedExamples(t *testing.T) {
	example, err := os.ReadFile("testdata/example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(13))
	tokens := []string{"0", "-1", "1e30", "9999999Ei", "1ns", "24h1s", "NaN", "50Mi/s", "-50Mi/s", "{}", "[]", "&a", "*a", ":", "- ", "\t", "\"", "~"}
	for i := 0; i < 3000; i++ {
		lines := strings.Split(string(example), "\n")
		for k := 0; k < 1+r.Intn(4) && len(lines) > 1; k++ {
			j := r.Intn(len(lines))
			switch r.Intn(5) {
			case 0:
				lines = append(lines[:j:j], lines[j+1:]...)
			case 1:
				lines = append(append(append([]string{}, lines[:j+1]...), lines[j]), lines[j+1:]...)
			case 2:
				o := r.Intn(len(lines))
				lines[j], lines[o] = lines[o], lines[j]
			case 3:
				if b := []byte(lines[j]); len(b) > 0 {
					b[r.Intn(len(b))] = byte(r.Intn(256))
					lines[j] = string(b)
				}
			default:
				if f := strings.Fields(lines[j]); len(f) > 0 {
					lines[j] = strings.Replace(lines[j], f[len(f)-1], tokens[r.Intn(len(tokens))], 1)
				}
			}
		}
		checkParse(t, strings.Join(lines, "\n"))
	}
}

// checkParse is the fuzz invariant.
func checkParse(t *testing.T, text string) {
	s, err := Parse(strings.NewReader(text), "fuzz.yaml")
	if err != nil {
		if !strings.Contains(err.Error(), "fuzz.yaml") {
			t.Fatalf("error without the file name: %v", err)
		}
		return
	}
	if s.Memory <= 0 || s.Duration <= 0 || s.Kubelet.Config == nil {
		t.Fatalf("accepted memory %d duration %s config %v", s.Memory, s.Duration, s.Kubelet.Config)
	}
	seen := map[string]bool{}
	for _, p := range s.Pods {
		c := p.Candidate
		if c.Name == "" || seen[c.Namespace+"/"+c.Name] || p.Usage.Start < 0 || p.Usage.Until < 0 || p.Limit < 0 || p.Start < 0 {
			t.Fatalf("accepted pod %+v", p)
		}
		seen[c.Namespace+"/"+c.Name] = true
	}
	cfg, err := threshold.ParseConfig(s.Kubelet.ThresholdInput())
	if err != nil {
		return
	}
	m, err := s.Model(cfg)
	if err != nil {
		return
	}
	m.Duration = min(m.Duration, 20*time.Second)
	timing := s.Timing
	timing.Step = max(timing.Step, 100*time.Millisecond)
	sim.Simulate(m.World(rand.New(rand.NewSource(s.Seed))), sim.Options{Kubelet: cfg, Timing: timing})
}
