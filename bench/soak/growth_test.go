package soak

import (
	"strings"
	"testing"
	"time"
)

func TestWorkloadGrowth(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want time.Duration
		err  string
	}{
		{"a paced hog grows until it reaches its target", []string{"mem", "--rate", "16Mi", "--target", "896Mi"}, 56 * time.Second, ""},
		{"an unpaced hog has no pace to wait for", []string{"mem", "--rate", "0", "--target", "1Gi"}, 0, ""},
		{"a disk writer grows until its target", []string{"disk", "--path", "/data/fill", "--rate", "16Mi", "--target", "256Mi"}, 16 * time.Second, ""},
		{"a files workload makes its count at its rate", []string{"files", "--path", "/data/d", "--count", "20000", "--rate", "2000"}, 10 * time.Second, ""},
		{"a thrasher and a sleeper count nothing", []string{"thrash", "--path", "/data/f", "--size", "512Mi"}, 0, ""},
		{"a rate that is not a quantity names the workload, the flag and the value", []string{"mem", "--rate", "fast", "--target", "1Gi"}, 0, `workload w: --rate "fast"`},
		{"a count that is not a number names it", []string{"files", "--count", "many", "--rate", "2000"}, 0, `workload w: --count "many"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Workload{Name: "w", Args: tc.args}.Growth()
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one saying %s", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("Growth() = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

func TestPlanMinDurationCoversTheSlowestWorkloadAndTheFault(t *testing.T) {
	slow := Workload{Name: "hog-0", Args: []string{"mem", "--rate", "16Mi", "--target", "896Mi"}}
	fast := Workload{Name: "hog-1", Args: []string{"mem", "--rate", "64Mi", "--target", "448Mi"}}
	late := &Fault{Kind: FaultAPIServerStop, At: Duration(40 * time.Second), For: Duration(30 * time.Second)}
	for _, tc := range []struct {
		name string
		p    Plan
		want time.Duration
	}{
		{"fast workloads keep the floor", Plan{Workloads: []Workload{fast}}, 45 * time.Second},
		{"a slow hog keeps the episode until its target and a settle after it", Plan{Workloads: []Workload{fast, slow}}, 71 * time.Second},
		{"a late fault keeps the episode until its end and a settle after it", Plan{Workloads: []Workload{slow}, Fault: late}, 85 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := tc.p.MinDuration(45 * time.Second); err != nil || got != tc.want {
				t.Errorf("MinDuration = %s, %v; want %s", got, err, tc.want)
			}
		})
	}
}

// Every plan the driver draws has workloads whose growth parses, and the slowest fits the cap.
func TestEveryDrawnPlanHasAMinDurationWithinTheDefaultCap(t *testing.T) {
	for e := 1; e <= 200; e++ {
		p := Draw(20261205, e, DrawConfig{Faults: FaultKinds(), FaultEpisode: -1, FaultChance: 0.6, FaultWithin: 40 * time.Second})
		d, err := p.MinDuration(minEpisode)
		if err != nil {
			t.Fatal(err)
		}
		if d >= 150*time.Second {
			t.Errorf("episode %d: MinDuration %s is not within the default cap 150s", e, d)
		}
	}
}
