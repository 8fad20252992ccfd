package policy

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/golden"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

func kubelet(t *testing.T, hard map[string]string) threshold.Config {
	t.Helper()
	cfg, err := threshold.ParseConfig(threshold.Input{EvictionHard: hard, EvictionHardSet: true})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestPressureThresholdsAddTheHeadroom(t *testing.T) {
	kc := kubelet(t, map[string]string{"memory.available": "100Mi", "nodefs.available": "10%", "pid.available": "1000"})
	snap := signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
		signal.MemoryAvailable:            {Available: 10 << 30, Capacity: 24 << 30},
		signal.AllocatableMemoryAvailable: {Available: 1 << 30, Capacity: 2 << 30},
		signal.NodeFsAvailable:            {Available: 50 << 30, Capacity: 100 << 30},
		signal.PIDAvailable:               {Available: 30000, Capacity: 32768},
	}}
	// A dedicated imagefs: nodefs holds no images, its headroom cannot meet the image GC.
	cfg, _ := pressureThresholds(kc, snap, signal.FilesystemLayout{DedicatedImageFs: true}, DefaultHeadroom())
	got := map[string]string{}
	for _, th := range cfg.Thresholds {
		mr := "<nil>"
		if th.MinReclaim != nil {
			mr = th.MinReclaim.String()
		}
		got[string(th.Signal)] = th.Value.String() + " minReclaim=" + mr
	}
	want := map[string]string{
		"allocatableMemory.available": "356Mi minReclaim=100Mi",       // 100Mi + 256Mi (5% of 2Gi is less)
		"memory.available":            "356Mi minReclaim=100Mi",       // 100Mi + 256Mi
		"nodefs.available":            "16106127600 minReclaim=100Mi", // 10% + 5% of 100Gi, both float32 fractions as the kubelet resolves them
		"pid.available":               "2638 minReclaim=<nil>",        // 1000 + 5% of 32768
	}
	if d := cmp.Diff(got, want); d != "" {
		t.Errorf("thresholds (-got +want):\n%s", d)
	}
}

// The disk thresholds follow the kubelet's where a headroom would make the agent evict at the kubelet's
// image GC start (85% used by default): there the kubelet deletes unused images, not pods.
func TestDiskHeadroomIsWithheldWhereItWouldReachTheImageGCStart(t *testing.T) {
	gc := func(v int32) *int32 { return &v }
	for _, tc := range []struct {
		name   string
		hard   map[string]string
		layout signal.FilesystemLayout
		gcHigh *int32
		// want is nodefs.available's threshold; withheld whether a headroom note says why none was added.
		want     string
		withheld bool
	}{
		{"one filesystem: 10% + 5% reaches the GC start at 15% available: the kubelet's 10%", map[string]string{"nodefs.available": "10%"},
			signal.FilesystemLayout{}, nil, "10737418400", true},
		{"one filesystem, a low threshold: 5% + 5% stays below 15%: raised", map[string]string{"nodefs.available": "5%"},
			signal.FilesystemLayout{}, nil, "10737418400", false},
		{"image GC starting at 95% used: 10% + 5% is above 5% available: withheld", map[string]string{"nodefs.available": "10%"},
			signal.FilesystemLayout{}, gc(95), "10737418400", true},
		{"image GC off (100%): nothing to reach: raised", map[string]string{"nodefs.available": "10%"},
			signal.FilesystemLayout{}, gc(100), "16106127600", false},
		{"dedicated imagefs: nodefs holds no images: raised", map[string]string{"nodefs.available": "10%"},
			signal.FilesystemLayout{DedicatedImageFs: true}, nil, "16106127600", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kc := kubelet(t, tc.hard)
			kc.ImageGCHighThresholdPercent = tc.gcHigh
			snap := signal.Snapshot{Observations: map[signal.Signal]signal.Observation{
				signal.NodeFsAvailable: {Available: 50 << 30, Capacity: 100 << 30}}}
			cfg, notes := pressureThresholds(kc, snap, tc.layout, DefaultHeadroom())
			if got := cfg.Thresholds[0].Value.String(); got != tc.want {
				t.Errorf("nodefs.available threshold %s, want %s", got, tc.want)
			}
			if len(notes) != 1 || (notes[0].Withheld != "") != tc.withheld {
				t.Errorf("headroom notes %+v, want withheld=%t", notes, tc.withheld)
			}
		})
	}
}

// TestStepIsPureAndNeverModifiesItsArguments replays every scenario and, at every step, steps twice
// from the same State with the same Input: a Step that wrote into either would make the second answer
// differ from the first, or the Input differ from its copy.
func TestStepIsPureAndNeverModifiesItsArguments(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		m := newMachine()
		steps := 0
		exec := func(cmd string) (string, error) {
			if !strings.HasPrefix(cmd, "step") {
				return m.run(cmd)
			}
			steps++
			in, err := m.input(strings.Fields(cmd)[1:])
			if err != nil {
				return "", err
			}
			before := deepCopy(in)
			prev := m.state
			s1, p1 := Step(prev, in)
			s2, p2 := Step(prev, in)
			if !reflect.DeepEqual(p1, p2) || !reflect.DeepEqual(s1, s2) {
				t.Errorf("%s step %d: two steps from the same state and input differ", path, steps)
			}
			if !reflect.DeepEqual(in, before) {
				t.Errorf("%s step %d: Step modified its input", path, steps)
			}
			m.state, m.outcomes = s1, nil
			return render(in.Now, p1), nil
		}
		if _, err := golden.Script(string(data), exec); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
}

// deepCopy copies what an Input holds by reference.
func deepCopy(in Input) Input {
	out := in
	out.Snapshot.Observations = copyMap(in.Snapshot.Observations)
	out.Snapshot.Pods = copyMap(in.Snapshot.Pods)
	out.Pods = append([]Pod(nil), in.Pods...)
	for i, p := range out.Pods {
		if p.Candidate.Stats != nil {
			s := *p.Candidate.Stats
			out.Pods[i].Candidate.Stats = &s
		}
	}
	out.InFlight = append([]InFlight(nil), in.InFlight...)
	out.Outcomes = append([]Outcome(nil), in.Outcomes...)
	out.Kubelet.Thresholds = append([]threshold.Threshold(nil), in.Kubelet.Thresholds...)
	out.Config.Headroom = copyMap(in.Config.Headroom)
	return out
}

func TestConfigValidateNamesEveryProblem(t *testing.T) {
	c := DefaultConfig()
	c.Policy = "fast"
	c.MaxEvictionsPerSync, c.MaxEvictionsPerMinute = 0, 0
	c.InFlightTTL, c.PDBRetry = 0, -1
	c.APIBackoffMin, c.APIBackoffMax = 2, 1
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate accepted a bad configuration")
	}
	for _, want := range []string{`policy "fast"`, "maxEvictionsPerSync 0", "maxEvictionsPerMinute 0", "inFlightTTL", "pdbRetry", "apiBackoff"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("defaults are invalid: %v", err)
	}
}
