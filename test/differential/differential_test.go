package differential

import (
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/signal"
)

var (
	seed   = flag.Int64("seed", 20261129, "seed of the case generator")
	ncases = flag.Int("cases", 400, "number of generated cases")
	write  = flag.String("write-cases", "", "also write each release's generated cases to this file + \".\" + the release (JSON lines, the oracle's input)")
	// nfamily is the number of cases of each version family (genversion_test.go) per release.
	nfamily = flag.Int("family-cases", 40, "number of generated cases of each version family")
	// only selects releases; PRESSURE_DIFFERENTIAL_RELEASES sets it where flags cannot be passed (make).
	only = flag.String("releases", os.Getenv("PRESSURE_DIFFERENTIAL_RELEASES"),
		"comma-separated kubelet releases to compare with, or \"all\" (default: the pinned release and every release whose oracle is cached)")
)

// tally counts what the run covered, so a generator that stops reaching a path fails the test.
type tally struct {
	cases, configErrors, steps, summaryErrors        int
	pressureEvictions, localEvictions, softEvictions int
	reclaimSteps, reclaimRelieved, staleSteps        int
	rejections, byThresholdChoice, byTie, mismatches int
	memory, disk, pid, idleSteps                     int
	// local-storage path: evictions by check, steps with and without a met threshold, critical pods
	// refused, and pods of the predicted group (decision.PredictOrder, what explain lists first)
	localEmptyDir, localPod, localContainer        int
	localWithThreshold, localWithout, localRefused int
	predictedLocal                                 int
}

func TestKubeletEvictionManagerAgreesWithCore(t *testing.T) {
	checkReleases(t)
	g := &gen{r: rand.New(rand.NewSource(*seed))}
	base := make([]Case, *ncases)
	for i := range base {
		base[i] = g.genCase(i)
	}
	outcomes := map[string]map[string]string{} // family -> release -> the kubelet's evictions
	ran := map[string]bool{}
	for _, rel := range selectedReleases(t) {
		t.Run(rel.Version, func(t *testing.T) {
			bin := oracleBinary(t, rel)
			ran[rel.Version] = true
			cases := append(append([]Case{}, base...), familyCases(*seed, *nfamily, rel)...)
			if *write != "" {
				writeCases(t, *write+"."+rel.Version, cases)
			}
			began := time.Now()
			results := runOracleParallel(t, bin, cases, 2)
			var tl tally
			reported, byFamily := 0, map[string]int{}
			for i := range cases {
				diff := compareCase(&cases[i], results[i], &tl, rel)
				if diff == "" {
					continue
				}
				tl.mismatches++
				fam := familyOf(cases[i].Name)
				if fam == "" {
					fam = "random"
				}
				byFamily[fam]++
				if reported < 10 {
					reported++
					t.Errorf("%s (seed %d, kubelet %s): kubelet (-) vs core (+):\n%s\ncase and oracle result: %s", cases[i].Name,
						*seed, rel.Version, diff, dumpCase(t, &cases[i], results[i], rel))
				}
			}
			t.Logf("kubelet %s: %d cases in %s: %+v", rel.Version, len(cases), time.Since(began).Round(time.Millisecond), tl)
			if len(byFamily) > 0 {
				t.Logf("kubelet %s: disagreements by case family: %v", rel.Version, byFamily)
			}
			checkCoverage(t, tl)
			checkDetects(t, cases, results, rel)
			recordOutcomes(t, outcomes, rel, cases, results)
		})
	}
	checkFamilyDifferences(t, outcomes, ran)
}

// checkDetects shows that the comparison can fail: one-byte or one-bit changes of a kubelet answer
// that contains a pressure eviction, or several local-storage evictions, must each be reported.
func checkDetects(t *testing.T, cases []Case, results []Result, rel release) {
	t.Helper()
	detects(t, cases, results, rel, "a pressure eviction", func(sr StepResult) bool {
		return len(sr.Evictions) == 1 && sr.Evictions[0].Condition != nil && len(sr.Admissions) > 0
	}, map[string]func(*StepResult){
		"message":   func(s *StepResult) { s.Evictions[0].Message += "x" },
		"event":     func(s *StepResult) { s.Evictions[0].Event.Annotations = map[string]string{"starved_resource": "cpu"} },
		"grace":     func(s *StepResult) { *s.Evictions[0].GracePeriodOverride++ },
		"victim":    func(s *StepResult) { s.Evictions[0].UID += "-other" },
		"condition": func(s *StepResult) { s.Evictions[0].Condition = nil },
		"metric":    func(s *StepResult) { s.EvictionCounts = map[string]float64{"no.such.signal": 1} },
		"pressure":  func(s *StepResult) { s.DiskPressure = !s.DiskPressure },
		"admission": func(s *StepResult) { s.Admissions[0].Admit = !s.Admissions[0].Admit },
		"node GC":   func(s *StepResult) { s.ImageGC++ },
	})
	detects(t, cases, results, rel, "two local-storage evictions in one step", func(sr StepResult) bool {
		return len(sr.Evictions) >= 2 && sr.Evictions[0].Condition == nil
	}, map[string]func(*StepResult){
		"local message": func(s *StepResult) { s.Evictions[0].Message += "x" },
		"local victim":  func(s *StepResult) { s.Evictions = s.Evictions[1:] },
	})
}

// detects applies each mutation to the first kubelet step that fits and requires a reported difference.
func detects(t *testing.T, cases []Case, results []Result, rel release, what string, fits func(StepResult) bool,
	mutations map[string]func(*StepResult)) {
	t.Helper()
	for i := range cases {
		for j, sr := range results[i].Steps {
			if !fits(sr) {
				continue
			}
			for name, mutate := range mutations {
				r := cloneResult(t, results[i])
				mutate(&r.Steps[j])
				if compareCase(&cases[i], r, &tally{}, rel) == "" {
					t.Errorf("self-check: %s step %d: a changed %s in the kubelet's answer went unnoticed", cases[i].Name, j, name)
				}
			}
			return
		}
	}
	t.Errorf("self-check: no case with %s to mutate", what)
}

func cloneResult(t *testing.T, r Result) Result {
	t.Helper()
	data, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var out Result
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkCoverage fails when the generated cases stopped exercising a path.
func checkCoverage(t *testing.T, tl tally) {
	t.Helper()
	if *ncases < 200 {
		return
	}
	for name, n := range map[string]int{
		"pressure evictions": tl.pressureEvictions, "local-storage evictions": tl.localEvictions,
		"soft-threshold evictions": tl.softEvictions, "node-level reclaim steps": tl.reclaimSteps,
		"reclaim that relieved the pressure": tl.reclaimRelieved, "stale-stats steps": tl.staleSteps,
		"admission rejections": tl.rejections, "config errors": tl.configErrors, "summary errors": tl.summaryErrors,
		"memory evictions": tl.memory, "disk evictions": tl.disk, "pid evictions": tl.pid,
		"emptyDir sizeLimit evictions": tl.localEmptyDir, "pod ephemeral-storage limit evictions": tl.localPod,
		"container ephemeral-storage limit evictions": tl.localContainer,
		"local-storage steps with a threshold met":    tl.localWithThreshold,
		"local-storage steps without a threshold met": tl.localWithout,
		"critical pods over a local-storage limit":    tl.localRefused, "predicted local-storage victims": tl.predictedLocal,
	} {
		if n == 0 {
			t.Errorf("coverage: no %s in %d cases", name, tl.cases)
		}
	}
}

func writeCases(t *testing.T, path string, cases []Case) {
	t.Helper()
	var b []byte
	for i := range cases {
		data, err := json.Marshal(&cases[i])
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, data...), '\n')
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func dumpCase(t *testing.T, c *Case, r Result, rel release) string {
	dir := filepath.Join(os.TempDir(), "pressure-differential")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "(not written: " + err.Error() + ")"
	}
	path := filepath.Join(dir, fmt.Sprintf("%d-%s-%s.json", *seed, rel.Version, c.Name))
	data, err := json.MarshalIndent(map[string]any{"case": c, "kubelet": r}, "", " ")
	if err == nil {
		err = os.WriteFile(path, data, 0o644)
	}
	if err != nil {
		return "(not written: " + err.Error() + ")"
	}
	return path
}

// compareCase runs the case through our core and returns the first difference, "" when none.
func compareCase(c *Case, res Result, tl *tally, rel release) string {
	tl.cases++
	cfg, sem, lsci, idle, err := ourConfig(c, rel)
	if (err != nil) != (res.ConfigError != "") {
		return fmt.Sprintf("config: kubelet error %q, ours %v", res.ConfigError, err)
	}
	if err != nil {
		tl.configErrors++
		return ""
	}
	if len(res.Steps) != len(c.Steps) {
		return fmt.Sprintf("oracle returned %d steps for %d", len(res.Steps), len(c.Steps))
	}
	layout := signal.FilesystemLayout{DedicatedImageFs: c.DedicatedImageFs, SplitContainerFs: c.SplitContainerFs}
	var st decision.State
	evicted := map[string]bool{}
	start := time.UnixMilli(c.StartUnixMilli).UTC()
	for i := range c.Steps {
		step, k := &c.Steps[i], res.Steps[i]
		tl.steps++
		if step.SummaryError && !idle {
			tl.summaryErrors++
			want := StepResult{SummaryCalls: 1}
			setConditions(&want, st.Conditions, c.Probes)
			if diff := cmp.Diff(normalize(k), normalize(want)); diff != "" {
				return fmt.Sprintf("step %d (summary error):\n%s", i, diff)
			}
			continue
		}
		snap := kubeconv.Snapshot(step.Summary)
		if step.Summary != nil && step.Summary.Node.Runtime != nil && snap.Filesystems != layout {
			return fmt.Sprintf("step %d: kubeconv.Layout %+v, case layout %+v", i, snap.Filesystems, layout)
		}
		snap.Filesystems = layout
		afterSum := step.Summary
		if step.AfterReclaim != nil {
			afterSum = step.AfterReclaim
		}
		after := kubeconv.Snapshot(afterSum)
		after.Filesystems = layout
		in := decision.Input{Now: start.Add(time.Duration(step.OffsetMillis) * time.Millisecond), Snapshot: snap,
			Config: cfg, DisableLocalStorageCapacityIsolation: !lsci, Semantics: sem}
		for p := range step.Pods {
			if !evicted[string(step.Pods[p].UID)] {
				in.Candidates = append(in.Candidates, kubeconv.Candidate(apiView(&step.Pods[p]), snap.Pods))
			}
		}
		next, d := ourStep(st, in, &after)
		if idle { // the kubelet's synchronize returns at once: nothing read, nothing done
			tl.idleSteps++
			want := view(d, d.Conditions, c.Probes)
			want.SummaryCalls = 0
			if diff := cmp.Diff(normalize(k), normalize(want)); diff != "" {
				return fmt.Sprintf("step %d (nothing configured):\n%s", i, diff)
			}
			st = next
			continue
		}
		if diff := compareStep(st, in, &after, d, k, c, tl); diff != "" {
			return fmt.Sprintf("step %d:\n%s\ncore trace:\n%s", i, diff, traceText(d))
		}
		if diff := comparePrediction(st, in, k, tl); diff != "" {
			return fmt.Sprintf("step %d: predicted local-storage group (-kubelet +PredictOrder):\n%s", i, diff)
		}
		count(d, k, tl)
		st = next
		for _, e := range k.Evictions {
			evicted[e.UID] = true
		}
	}
	return ""
}

// compareStep accepts the kubelet's answer when it equals ours or one of the answers the kubelet
// could have given by its nondeterminism.
func compareStep(st decision.State, in decision.Input, after *signal.Snapshot, d decision.Decision, k StepResult,
	c *Case, tl *tally) string {
	got := normalize(k)
	diff := cmp.Diff(got, normalize(view(d, d.Conditions, c.Probes)))
	if diff == "" {
		return ""
	}
	alts := append([]variant{{in, d}}, thresholdVariants(st, in, after, d)...)
	for i, a := range alts {
		if i > 0 && cmp.Diff(got, normalize(view(a.d, d.Conditions, c.Probes))) == "" {
			tl.byThresholdChoice++
			return ""
		}
		if len(k.Evictions) == 1 {
			if tv, ok := tieVariant(st, a.in, a.d, k.Evictions[0].UID); ok &&
				cmp.Diff(got, normalize(view(tv, d.Conditions, c.Probes))) == "" {
				tl.byTie++
				return ""
			}
		}
	}
	return diff
}

func count(d decision.Decision, k StepResult, tl *tally) {
	local := 0
	for _, e := range d.Evictions {
		if e.Path == decision.PathLocalStorage {
			tl.localEvictions++
			local++
			switch e.MetricLabel {
			case decision.LabelEmptyDirLimit:
				tl.localEmptyDir++
			case decision.LabelEphemeralPodLimit:
				tl.localPod++
			case decision.LabelEphemeralContainerLim:
				tl.localContainer++
			}
			continue
		}
		tl.pressureEvictions++
		switch {
		case e.Signal.IsMemory():
			tl.memory++
		case e.Signal == signal.PIDAvailable:
			tl.pid++
		default:
			tl.disk++
		}
		if e.Grace.Override != 1 || e.Condition == nil {
			tl.softEvictions++
		}
	}
	switch {
	case local > 0 && len(d.Met) > 0:
		tl.localWithThreshold++
	case local > 0:
		tl.localWithout++
	}
	if d.NodeReclaim != nil {
		tl.reclaimSteps++
		if d.NodeReclaim.Succeeded {
			tl.reclaimRelieved++
		}
	}
	for _, e := range d.Trace {
		if e.Kind == decision.KindStale {
			tl.staleSteps++
			break
		}
	}
	for _, a := range k.Admissions {
		if !a.Admit {
			tl.rejections++
		}
	}
}

func traceText(d decision.Decision) string {
	var out string
	for _, e := range d.Trace {
		if e.Kind == decision.KindRank && len(out) > 6000 {
			continue
		}
		out += fmt.Sprintf("  %v\n", e)
	}
	return out
}
