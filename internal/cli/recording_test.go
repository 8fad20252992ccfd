package cli

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/golden"
)

// recordings are the recordings of test/e2e's TestSimulate... runs on the real node, with the
// kubelet's evictions (kubelet-evictions.json) and its eviction-manager log lines.
var recordings = []string{"ramp", "step", "fast-ramp"}

// untar extracts testdata/recordings/NAME.tar.gz into a temporary directory and returns it.
func untar(t *testing.T, name string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "recordings", name+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return filepath.Join(dir, name)
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(path, data, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// realEviction is one line of kubelet-evictions.json.
type realEviction struct {
	Pod              string
	Decided, Evicted time.Time
}

func TestSimulatePredictsTheKubeletsEvictionsOfTheCheckedInRecordings(t *testing.T) {
	for _, name := range recordings {
		t.Run(name, func(t *testing.T) {
			dir := untar(t, name)
			var real []realEviction
			res := simulateRecording(t, dir, "kubelet-evictions.json", &real)
			ns := strings.Split(real[0].Pod, "/")[0]
			var predicted []string
			var at []time.Time
			for _, e := range res.Runs[0].Events {
				if e.Kind == "evict" && strings.HasPrefix(e.Eviction.Pod, ns+"/") {
					predicted, at = append(predicted, e.Eviction.Pod), append(at, e.At)
				}
			}
			var want []string
			for _, r := range real {
				want = append(want, r.Pod)
			}
			if strings.Join(predicted, " ") != strings.Join(want, " ") {
				t.Fatalf("simulate predicts %v, the kubelet evicted %v", predicted, want)
			}
			recorded := map[string]time.Time{}
			for _, r := range res.Recorded {
				recorded[r.Pod] = r.At
			}
			for i, r := range real {
				if d := at[i].Sub(r.Decided); d.Abs() > 10*time.Second {
					t.Errorf("%s: predicted at %s, the kubelet decided at %s: more than one housekeeping interval apart", r.Pod, at[i], r.Decided)
				}
				// The recording's times are whole seconds (DisruptionTarget), written during the kill.
				if got, ok := recorded[r.Pod]; !ok || got.Sub(r.Evicted).Abs() > time.Second {
					t.Errorf("recorded eviction of %s at %v (listed: %v), the kubelet evicted it at %s", r.Pod, got, ok, r.Evicted)
				}
			}
			text, err := runCLI(t, "simulate", dir)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "simulate", "golden", "recording-"+name+".txt"), strings.ReplaceAll(text, dir, "DIR"))
		})
	}
}

func TestLoadRecordingNamesTheBadSnapshot(t *testing.T) {
	dir := untar(t, "ramp")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var snaps []string
	for _, e := range entries {
		if e.IsDir() {
			snaps = append(snaps, e.Name())
		}
	}
	// A temporary directory of an interrupted write is not a snapshot: ignored.
	if err := os.Mkdir(filepath.Join(dir, ".tmp-"+snaps[0]), 0o700); err != nil {
		t.Fatal(err)
	}
	rec, err := LoadRecording(dir)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Recording.Snapshots != len(snaps) {
		t.Errorf("%d snapshots loaded, want %d", rec.Recording.Snapshots, len(snaps))
	}
	bad := filepath.Join(dir, snaps[3], FileSummary)
	if err := os.WriteFile(bad, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadRecording(dir); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("error %v, want it to name %s", err, bad)
	}
}

// TestSimulateNamesTheAgentsVictimsOfSoakRecordings replays six soak episodes (bench/soak: seed
// 1796443068, episodes 34 and 35; seed 20261205, episode 0) in which the real pressure-agent evicted pods, recorded with the
// agent's own view (record --local): simulate's pressure-agent run evicts the pods the agent evicted
// (agent-evictions.json: its eviction requests the API server accepted, from the audit log, and its
// DELETE after a PodDisruptionBudget's refusal), and the recording lists each as pressure-agent's,
// within a second of the request. Before the recording told the agent's evictions apart, they were
// deletions that ended the pods in every run: the run lost a ramping pod the moment the real agent
// evicted it (episode 35: hog-2 never predicted) and counted the DELETE as nobody's (episode 34); and
// a release read just before the ledger's time of the eviction was taken for the pod's own (seed
// 20261205 episode 0: hog-1 never predicted). Two episodes of the fifth run (seed 20261205, run f):
// 29, where the simulated Eviction API accepted both pods of a Deployment whose budget allowed one
// eviction (the agent DELETEd the second after the refusal, and the model freed it 7 s early, so it
// never evicted hog-0), and 33, where the agent took 0.3-0.4 s per eviction and synced again only
// after three of them (the model evicted them at once and synced again at once, and saw the pressure
// end before the fork pod's turn): simulate now reads both from the recording (the ledger's rung, the
// gaps between the ledger's evictions: timing.agentRequest). And 33's rerun alone, where the model
// synced in the one local read torn by steady-burstable's release (its own read held 98.4Mi, the pods
// cgroup's, read after it, had it back), credited the pod in flight a second time and evicted neither
// steady-besteffort nor fork, which the agent evicted on a consistent read 25 ms later: the release is
// now the torn read's. And seed 1's episode 2 of make test's short soak (2026-12-06): hog-2 read 3.5Mi,
// then 1.4Mi, 0.9 s before the agent evicted it at 640Mi; the model took that dip for the release, froze
// hog-2 at its size then and evicted three other pods in its place. A release is now a fall the pod's
// memory does not come back from (29's cache pod had the same false release, 1 s before its eviction).
func TestSimulateNamesTheAgentsVictimsOfSoakRecordings(t *testing.T) {
	for _, name := range []string{"soak-ep0", "soak-ep34", "soak-ep35", "soak-1205f-ep29", "soak-1205f-ep33", "soak-1205f-ep33-rerun", "soak-1206-seed1-ep2", "soak-1206-seed1-ep0-pdb"} {
		t.Run(name, func(t *testing.T) {
			dir := untar(t, name)
			var real []struct {
				Pod  string
				At   time.Time
				Rung string
			}
			res := simulateRecording(t, dir, "agent-evictions.json", &real)
			var predicted []string
			for _, r := range res.Runs {
				for _, e := range r.Events {
					if r.Name == "agent" && e.Kind == "evict" && e.Actor == "pressure-agent" && strings.HasPrefix(e.Eviction.Pod, "soak-") {
						predicted = append(predicted, e.Eviction.Pod)
					}
				}
			}
			var want []string
			for _, r := range real {
				want = append(want, r.Pod)
			}
			slices.Sort(predicted)
			slices.Sort(want)
			if !slices.Equal(predicted, want) {
				t.Errorf("simulate's pressure-agent evicts %v, the agent evicted %v", predicted, want)
			}
			recorded := map[string]int{}
			for i, r := range res.Recorded {
				recorded[r.Pod] = i
			}
			for _, r := range real {
				i, ok := recorded[r.Pod]
				if !ok {
					t.Errorf("the recording does not list the agent's eviction of %s (%s)", r.Pod, r.Rung)
					continue
				}
				if got := res.Recorded[i]; got.By != "pressure-agent" || got.At.Sub(r.At).Abs() > time.Second {
					t.Errorf("the recording lists %s by %s at %s; the agent asked at %s", r.Pod, got.By, got.At, r.At)
				}
			}
			text, err := runCLI(t, "simulate", dir)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "simulate", "golden", "recording-"+name+".txt"), strings.ReplaceAll(text, dir, "DIR"))
		})
	}
}

// simulatedRecording is the part of `simulate -o json` these tests read.
type simulatedRecording struct {
	Runs []struct {
		Name   string
		Events []struct {
			At       time.Time
			Actor    string
			Kind     string
			Eviction *struct{ Pod string }
		}
	}
	Recorded []struct {
		Pod string
		At  time.Time
		By  string
	}
}

// simulateRecording reads the real evictions of the recording dir (its file name, JSON) into real and
// returns what `simulate dir -o json` says.
func simulateRecording(t *testing.T, dir, name string, real any) simulatedRecording {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, real); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "simulate", dir, "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var res simulatedRecording
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// The agent's time per eviction and its pods' release times come from the recording (soak episode 33):
// the simulated agent carries out a plan's three evictions 334ms apart, as the real one did, and lets
// each pod go as long after its request as the recording shows; told that the shell takes no time it
// makes them at one instant, and told a release time, it gives every pod that one.
func TestSimulateReadsTheAgentsTimePerEvictionFromTheRecording(t *testing.T) {
	dir := untar(t, "soak-1205f-ep33")
	for _, tc := range []struct {
		name      string
		args      []string
		wantAt    []string // the agent's run's evictions of the plan at +0:18.5
		wantNotes []string
	}{
		{"from the recording", nil, []string{"+0:18.5", "+0:18.8", "+0:19.1"},
			[]string{"334ms each", "as long after the request as the recorded agent's did", "(5 pods); any other pod 713ms"}},
		{"set to nothing", []string{"--set", "timing.agentRequest=0s"}, []string{"+0:18.5", "+0:18.5", "+0:18.5"},
			[]string{"as long after the request as the recorded agent's did"}},
		{"one release time for every pod", []string{"--set", "timing.agentEviction=1s"}, []string{"+0:18.5", "+0:18.8", "+0:19.1"},
			[]string{"334ms each", "what-if: --set timing.agentEviction=1s"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCLI(t, append([]string{"simulate", dir}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			agentRun := out[strings.Index(out, "RUN agent"):strings.Index(out, "RECORDED")]
			var at []string
			for _, pod := range []string{"steady-burstable", "cache", "steady-besteffort"} {
				for _, line := range strings.Split(agentRun, "\n") {
					if f := strings.Fields(line); len(f) > 3 && f[2] == "evict" &&
						strings.Contains(line, "soak-20261205-33/"+pod+" ") {
						at = append(at, f[0])
					}
				}
			}
			if !slices.Equal(at, tc.wantAt) {
				t.Errorf("the agent's run evicts steady-burstable, cache, steady-besteffort at %v, want %v\n%s", at, tc.wantAt, agentRun)
			}
			notes := out[strings.Index(out, "NOTES"):]
			for _, n := range tc.wantNotes {
				if !strings.Contains(notes, n) {
					t.Errorf("NOTES lack %q\n%s", n, notes)
				}
			}
			if got := strings.Contains(notes, "as long after the request as the recorded agent's did"); got == slices.Contains(tc.args, "timing.agentEviction=1s") {
				t.Errorf("NOTES on the recorded release times: %t with %v\n%s", got, tc.args, notes)
			}
		})
	}
}
