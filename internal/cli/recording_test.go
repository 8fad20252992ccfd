package cli

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
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
			data, err := os.ReadFile(filepath.Join(dir, "kubelet-evictions.json"))
			if err != nil {
				t.Fatal(err)
			}
			var real []realEviction
			if err := json.Unmarshal(data, &real); err != nil {
				t.Fatal(err)
			}
			out, err := runCLI(t, "simulate", dir, "-o", "json")
			if err != nil {
				t.Fatal(err)
			}
			var res struct {
				Runs []struct {
					Name   string
					Events []struct {
						At       time.Time
						Kind     string
						Eviction *struct{ Pod string }
					}
				}
				Recorded []struct {
					Pod string
					At  time.Time
				}
			}
			if err := json.Unmarshal([]byte(out), &res); err != nil {
				t.Fatal(err)
			}
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
