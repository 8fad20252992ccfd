package soak

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// outDir is cfg.out (created) or a new pressure-soak-SEED-* directory under the temp dir.
func outDir(cfg config) (string, error) {
	if cfg.out == "" {
		return os.MkdirTemp("", fmt.Sprintf("pressure-soak-%d-", cfg.seed))
	}
	if err := os.MkdirAll(cfg.out, 0o755); err != nil {
		return "", fmt.Errorf("soak output directory %s: %w", cfg.out, err)
	}
	return cfg.out, nil
}

// report collects the episodes' results and writes the artefacts: each failing episode's directory
// (episode-N: its plan, what it observed, its violations, its recording), resources.json (every sampled
// series), resources.svg (their plot) and summary.md.
type report struct {
	cfg     config
	out     string
	started time.Time
	results []result
	// runViolations are the run-level checks' (evidence, resources, restarts).
	runViolations []Violation
	failed        bool
}

func (r *report) path() string { return filepath.Join(r.out, "summary.md") }

// add records one episode, writes its artefacts, and fails t (naming the seed and how to rerun the
// episode alone) when it broke an invariant; a passing episode's directory is removed.
func (r *report) add(t *testing.T, res result, err error) {
	t.Helper()
	r.results = append(r.results, res)
	p := res.Plan
	dir := filepath.Join(r.out, fmt.Sprintf("episode-%d", p.Episode))
	if werr := writeJSON(filepath.Join(dir, "result.json"), res); werr != nil {
		t.Error(werr)
	}
	fault := "no fault"
	if p.Fault != nil {
		fault = fmt.Sprintf("fault %s at %s: %s%s", p.Fault.Kind, time.Duration(p.Fault.At), res.FaultDid, res.FaultErr)
	}
	probe := "no probe: not calm"
	if res.Calm {
		probe = "probe pod ran after " + time.Duration(res.ProbeTook).Round(time.Millisecond).String()
		if res.ProbeTook < 0 {
			probe = "probe pod did not run"
		}
		if len(res.ProbeTaints) > 0 {
			probe += ", taints while it waited: " + strings.Join(res.ProbeTaints, ", ")
		}
	}
	t.Logf("episode %d of seed %d: %d workloads, %s; %s, calm %v (%s); %d evictions, %d kernel OOM kills, %d shells, %d kept off by an avoidance; %d violations",
		p.Episode, p.Seed, len(p.Workloads), fault, res.Ended.Sub(res.Started).Round(time.Second), res.Calm, probe, len(res.Evictions),
		len(res.Kills), len(res.Shells), len(res.KeptOff), len(res.Violations))
	if res.FaultErr != "" {
		t.Errorf("episode %d of seed %d: the fault failed: %s", p.Episode, p.Seed, res.FaultErr)
	}
	if len(res.Violations) > 0 || err != nil || res.FaultErr != "" {
		r.failed = true
		for _, v := range res.Violations {
			t.Errorf("episode %d of seed %d: %s", p.Episode, p.Seed, v)
		}
		t.Logf("episode %d of seed %d failed: artefacts kept in %s; rerun it alone with %s", p.Episode, p.Seed, dir, r.cfg.rerun(p.Episode))
		return
	}
	if len(res.Notes) > 0 {
		t.Logf("episode %d of seed %d held an invariant only within its tolerance (%s): artefacts kept in %s", p.Episode, p.Seed,
			strings.Join(res.Notes, "; "), dir)
		return
	}
	_ = os.RemoveAll(dir)
}

// finish runs the run-level checks (an evidence Event for each collected shell, resources flat,
// restarts explained by the faults), writes resources.json and summary.md, and fails t on a violation.
func (r *report) finish(t *testing.T, series []Series, pods []PodSample, evid []EvidenceEvent, ledger []LedgerSample) {
	t.Helper()
	var collected []string
	var faults []FaultKind
	for _, res := range r.results {
		collected = append(collected, res.Collected...)
		if res.Plan.Fault != nil && res.FaultErr == "" {
			faults = append(faults, res.Plan.Fault.Kind)
		}
	}
	r.runViolations = append(r.runViolations, EvidenceForEach(collected, evid)...)
	r.runViolations = append(r.runViolations, Flat(series)...)
	r.runViolations = append(r.runViolations, LedgerBounded(ledger, LedgerMaxAge(ledgerSlack), ledgerSlack)...)
	restarts := CountRestarts(pods, map[string]int{"agent": 1, "janitor": janitorReplicas})
	r.runViolations = append(r.runViolations, NoUnexpectedRestarts(restarts, AllowedRestarts(faults, janitorReplicas))...)
	for _, v := range r.runViolations {
		r.failed = true
		t.Errorf("seed %d, over the run: %s", r.cfg.seed, v)
	}
	if err := writeJSON(filepath.Join(r.out, "resources.json"), series); err != nil {
		t.Error(err)
	}
	if err := writeJSON(filepath.Join(r.out, "ledger.json"), ledger); err != nil {
		t.Error(err)
	}
	var svg bytes.Buffer
	if err := Plot(&svg, series); err != nil {
		t.Error(err)
	} else if err := os.WriteFile(filepath.Join(r.out, "resources.svg"), svg.Bytes(), 0o644); err != nil {
		t.Error(err)
	} else {
		r.png(t)
	}
	text := r.markdown(series, ledger, restarts, len(collected))
	if err := os.WriteFile(r.path(), []byte(text), 0o644); err != nil {
		t.Error(err)
	}
	t.Logf("summary:\n%s", text)
}

// png converts resources.svg to resources.png (a white background) with rsvg-convert when it is
// installed, and says so when it is not: the SVG holds the same plot.
func (r *report) png(t *testing.T) {
	conv, err := exec.LookPath("rsvg-convert")
	if err != nil {
		t.Logf("no resources.png: rsvg-convert is not installed (apt-get install librsvg2-bin); resources.svg has the same plot")
		return
	}
	out, err := exec.Command(conv, "-b", "white", "-o", filepath.Join(r.out, "resources.png"), filepath.Join(r.out, "resources.svg")).CombinedOutput()
	if err != nil {
		t.Errorf("rsvg-convert resources.svg: %v: %s", err, out)
	}
}

// markdown is summary.md: the run, each episode, each invariant's count.
func (r *report) markdown(series []Series, ledger []LedgerSample, restarts map[string]int, collected int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# soak run: seed %d, episodes %d-%d\n\n", r.cfg.seed, r.cfg.first, r.cfg.first+len(r.results)-1)
	fmt.Fprintf(&b, "Started %s, %s; faults drawn from %v; episode cap %s.\n\n", r.started.UTC().Format(time.RFC3339),
		time.Since(r.started).Round(time.Second), r.cfg.draw.Faults, r.cfg.cap)
	b.WriteString("| episode | workloads | fault | duration | calm | evictions (agent/kubelet) | kernel OOM kills | shells | violations |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|\n")
	count, noted := map[string]int{}, map[string]int{}
	var notes []string
	for _, res := range r.results {
		var names []string
		for _, w := range res.Plan.Workloads {
			names = append(names, w.Name+" "+strings.Join(w.Args, " "))
		}
		fault := "-"
		if f := res.Plan.Fault; f != nil {
			fault = fmt.Sprintf("%s at %s", f.Kind, time.Duration(f.At))
			if f.For > 0 {
				fault += fmt.Sprintf(" for %s", time.Duration(f.For))
			}
		}
		agent, kubelet := 0, 0
		for _, e := range res.Evictions {
			if e.By == "agent" {
				agent++
			} else {
				kubelet++
			}
		}
		for _, v := range res.Violations {
			count[v.Invariant]++
		}
		for _, n := range res.Notes {
			inv, _, _ := strings.Cut(n, ":") // checkEpisode prefixes each note with its invariant's number
			noted[inv]++
			notes = append(notes, fmt.Sprintf("episode %d, invariant %s", res.Plan.Episode, n))
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %v | %d/%d | %d | %d | %s |\n", res.Plan.Episode, strings.Join(names, "; "), fault,
			res.Ended.Sub(res.Started).Round(time.Second), res.Calm, agent, kubelet, len(res.Kills), len(res.Shells), Names(res.Violations))
	}
	for _, v := range r.runViolations {
		count[v.Invariant]++
	}
	b.WriteString("\n| invariant | checked | violations |\n|---|---|---|\n")
	for _, inv := range Invariants() {
		checked := fmt.Sprintf("%d episodes", len(r.results))
		switch inv {
		case InvEvidence:
			checked = fmt.Sprintf("once, %d collected shells", collected)
		case InvFlat:
			checked = fmt.Sprintf("once, %d series (no verdict: %d with under %d samples or %s in their second half)", len(series), len(Verdictless(series)), minFlatPoints, minFlatSpan)
		case InvLedgerBounded:
			checked = fmt.Sprintf("once, %d samples (at most %d entries, oldest allowed %s)", len(ledger), maxEntries(ledger), LedgerMaxAge(ledgerSlack))
		case InvNoRestarts:
			checked = fmt.Sprintf("once: restarts %v", restarts)
		case InvSimulate:
			checked += fmt.Sprintf(" (%d agree only at a lead within 10%% or another phase of the agent's reads: see the notes)", noted["2"])
		case InvNoDoubleEviction:
			checked += fmt.Sprintf(" (%d counted once: the kubelet evicted a pod the agent had evicted as the API server came back; see the notes)", noted["3"])
		}
		fmt.Fprintf(&b, "| %s | %s | %d |\n", inv, checked, count[inv])
	}
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	return b.String()
}

func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return os.WriteFile(path, b, 0o644)
}
