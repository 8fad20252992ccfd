package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestRejudge judges invariants 2 and 6 again, with this tree's simulate and checks, on the failing
// episodes a run kept (SOAK_REJUDGE=dir, the run's SOAK_OUT): for each episode-N with a result.json and
// a recording, the agent's evictions of the run (result.json) against what simulate on the recording has
// pressure-agent evict now, and the probe's time and taints (result.json) against SchedulesAgain now. It
// prints a table and writes dir/rejudge.md. After a fix of the simulator or of a check, this is the
// rerun of a kept episode's judgement without the node.
func TestRejudge(t *testing.T) {
	dir := os.Getenv("SOAK_REJUDGE")
	if dir == "" {
		t.Skip("SOAK_REJUDGE is not set: it names a soak run's output directory whose kept episodes to judge again")
	}
	eps, err := filepath.Glob(filepath.Join(dir, "episode-*", "result.json"))
	if err != nil || len(eps) == 0 {
		t.Fatalf("no episode-*/result.json under %s (err %v)", dir, err)
	}
	sort.Strings(eps)
	var b strings.Builder
	b.WriteString("| episode | fault | agent evicted | simulate predicts now | invariant 2 now | invariant 6 now |\n|---|---|---|---|---|---|\n")
	for _, path := range eps {
		var r result
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &r); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rec := filepath.Join(filepath.Dir(path), "recording")
		if _, err := os.Stat(rec); err != nil {
			t.Logf("%s: no recording, not judged", path)
			continue
		}
		r.Evictions = withLoggedDeletes(r.Evictions, filepath.Join(filepath.Dir(path), "logs"), r.Plan.Namespace())
		predicted, err := predictAgent(context.Background(), rec)
		if err != nil {
			t.Errorf("%s: %v", rec, err)
			continue
		}
		near, err := predictNear(context.Background(), rec)
		if err != nil {
			t.Errorf("%s: %v", rec, err)
			continue
		}
		verdict := "judged: agree"
		within, late := Recorded(r.Evictions, r.Ended)
		if len(late) > 0 {
			verdict = "**violated**: " + late[0].Message
			t.Errorf("episode %d: %s", r.Plan.Episode, late[0].Message)
		} else if r.Plan.Fault != nil {
			verdict = "not judged (a fault)"
		} else if v, note := SimulateAgrees(within, predicted, near, false); len(v) > 0 {
			verdict = "**violated**: " + v[0].Message
			t.Errorf("episode %d: %s", r.Plan.Episode, v[0].Message)
		} else if note != "" {
			verdict = "judged: agree (" + note + ")"
		}
		fault, kind := "-", FaultKind("")
		if r.Plan.Fault != nil {
			fault = string(r.Plan.Fault.Kind)
			if r.FaultErr == "" {
				kind = r.Plan.Fault.Kind
			}
		}
		six := "agree"
		if v := SchedulesAgain(r.Calm, time.Duration(r.ProbeTook), r.ProbeTaints, taintHysteresis, kind); len(v) > 0 {
			six = "**violated**: " + v[0].Message
			t.Errorf("episode %d: %s", r.Plan.Episode, v[0].Message)
		}
		var real []string
		for _, e := range r.Evictions {
			if e.By == "agent" {
				real = append(real, e.Pod)
			}
		}
		short := make([]string, len(predicted))
		for i, p := range predicted {
			short[i] = p[strings.LastIndex(p, "/")+1:]
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s |\n", r.Plan.Episode, fault, strings.Join(real, ", "), strings.Join(short, ", "), verdict, six)
	}
	b.WriteString(rejudgeResources(t, dir))
	t.Logf("invariants judged again:\n%s", b.String())
	if err := os.WriteFile(filepath.Join(dir, "rejudge.md"), []byte(b.String()), 0o644); err != nil {
		t.Error(err)
	}
}

// withLoggedDeletes adds to evs the agent's DELETEs of pods of namespace ns its kept container logs
// (logsDir, which span earlier episodes too) show ("evict" or "eviction fallback" with rung delete and
// outcome evicted) that evs lacks: runs before the driver counted them from the audit log (2026-12-05
// 07:18) have them only there.
func withLoggedDeletes(evs []Eviction, logsDir, ns string) []Eviction {
	have := map[string]bool{}
	for _, e := range evs {
		have[e.Namespace+"/"+e.Pod] = true
	}
	files, _ := filepath.Glob(filepath.Join(logsDir, "*_pressure-agent-*", "agent", "*.log"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n") {
			_, js, ok := strings.Cut(line, " F ")
			if !ok {
				continue
			}
			var l struct {
				Time    time.Time `json:"time"`
				Msg     string    `json:"msg"`
				Pod     string    `json:"pod"`
				Rung    string    `json:"rung"`
				Outcome string    `json:"outcome"`
			}
			if json.Unmarshal([]byte(js), &l) != nil || (l.Msg != "evict" && l.Msg != "eviction fallback") || l.Rung != "delete" || l.Outcome != "evicted" || have[l.Pod] {
				continue
			}
			podNS, pod, _ := strings.Cut(l.Pod, "/")
			if podNS != ns {
				continue
			}
			have[l.Pod] = true
			evs = append(evs, Eviction{Namespace: ns, Pod: pod, At: l.Time, By: "agent", Rung: "delete"})
		}
	}
	return evs
}

// rejudgeResources judges invariant 7's Flat and LedgerBounded again on the run's resources.json and
// ledger.json, when the run wrote them (at its end), and returns a line for each.
func rejudgeResources(t *testing.T, dir string) string {
	var b strings.Builder
	var series []Series
	if data, err := os.ReadFile(filepath.Join(dir, "resources.json")); err == nil {
		if err := json.Unmarshal(data, &series); err != nil {
			t.Fatalf("resources.json: %v", err)
		}
		v := Flat(series)
		fmt.Fprintf(&b, "\ninvariant 7 Flat now: %d series, %d without a verdict, %d violations\n", len(series), len(Verdictless(series)), len(v))
		for _, x := range v {
			fmt.Fprintf(&b, "- %s\n", x.Message)
			t.Errorf("%s", x)
		}
	}
	if data, err := os.ReadFile(filepath.Join(dir, "ledger.json")); err == nil {
		var ls []LedgerSample
		if err := json.Unmarshal(data, &ls); err != nil {
			t.Fatalf("ledger.json: %v", err)
		}
		v := LedgerBounded(ls, LedgerMaxAge(ledgerSlack), ledgerSlack)
		fmt.Fprintf(&b, "\ninvariant 7 LedgerBounded now: %d samples, at most %d entries, %d violations\n", len(ls), maxEntries(ls), len(v))
		for _, x := range v {
			fmt.Fprintf(&b, "- %s\n", x.Message)
			t.Errorf("%s", x)
		}
	}
	return b.String()
}
