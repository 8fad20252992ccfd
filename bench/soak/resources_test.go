package soak

import (
	"fmt"
	"testing"
)

// series is n samples 40 s apart from f(i).
func series(name string, n int, floor float64, f func(i int) float64) Series {
	s := Series{Name: name, Floor: floor}
	for i := range n {
		s.Points = append(s.Points, Point{At: at(40 * i), V: f(i)})
	}
	return s
}

func TestFlat(t *testing.T) {
	const mi = 1 << 20
	for _, tc := range []struct {
		name string
		s    Series
		want int
	}{
		{"a flat series is allowed", series("rss", 20, 8*mi, func(i int) float64 { return 30 * mi }), 0},
		{"noise below the floor is allowed", series("rss", 20, 8*mi, func(i int) float64 { return 30*mi + float64(i%3)*mi }), 0},
		{"a rise in the first half only is allowed (warm-up)", series("rss", 20, 8*mi, func(i int) float64 { return float64(min(i, 9)) * 4 * mi }), 0},
		{"a steady leak over the second half is a violation", series("rss", 20, 8*mi, func(i int) float64 { return 30*mi + float64(i)*2*mi }), 1},
		{"a goroutine leak is a violation", series("goroutines", 20, 5, func(i int) float64 { return 40 + float64(i) }), 1},
		{"a plot-only series is not judged", plotOnly(series("ledger bytes", 40, 1024, func(i int) float64 { return float64(i) * 200 })), 0},
		{"a rise over a second half shorter than minFlatSpan gives no verdict (a short run's warm-up)",
			func() Series {
				s := series("rss", 20, 8*mi, func(i int) float64 { return float64(i) * 4 * mi })
				return spaced(s, 10)
			}(), 0},
		{"too few samples give no verdict", series("rss", 6, 8*mi, func(i int) float64 { return float64(i) * 100 * mi }), 0},
	} {
		t.Run(tc.name, func(t *testing.T) { wantViolations(t, Flat([]Series{tc.s}), tc.want, InvFlat) })
	}
	if got := Verdictless([]Series{series("short", 6, 1, func(int) float64 { return 0 }), series("long", 20, 1, func(int) float64 { return 0 }),
		plotOnly(series("plot", 6, 1, func(int) float64 { return 0 }))}); fmt.Sprint(got) != "[short]" {
		t.Errorf("Verdictless = %v, want [short]", got)
	}
}

// spaced returns s with its samples sec seconds apart.
func spaced(s Series, sec int) Series {
	for i := range s.Points {
		s.Points[i].At = at(sec * i)
	}
	return s
}

func plotOnly(s Series) Series {
	s.PlotOnly = true
	return s
}

func TestCountRestarts(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []PodSample
		want    map[string]int
	}{
		{"unchanged pods did not restart", []PodSample{{"agent", "a1", 0}, {"janitor", "j1", 0}, {"janitor", "j2", 1}, {"agent", "a1", 0}, {"janitor", "j2", 1}},
			map[string]int{"agent": 0, "janitor": 0}},
		{"a container restart counts", []PodSample{{"agent", "a1", 0}, {"agent", "a1", 1}}, map[string]int{"agent": 1}},
		{"a replaced pod counts", []PodSample{{"agent", "a1", 0}, {"agent", "a2", 0}}, map[string]int{"agent": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := CountRestarts(tc.samples, map[string]int{"agent": 1, "janitor": 2})
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("CountRestarts = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNoUnexpectedRestarts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		restarts map[string]int
		faults   []FaultKind
		want     int
	}{
		{"no restart and no fault is allowed", map[string]int{"agent": 0, "janitor": 0}, nil, 0},
		{"an agent restart after its pod was deleted is allowed", map[string]int{"agent": 1}, []FaultKind{FaultAgentPodDeleted}, 0},
		{"janitor restarts after an API outage are allowed", map[string]int{"janitor": 2}, []FaultKind{FaultAPIServerStop}, 0},
		{"an agent restart with no fault is a violation", map[string]int{"agent": 1}, nil, 1},
		{"an agent restart after an API outage is a violation", map[string]int{"agent": 1}, []FaultKind{FaultAPIServerStop}, 1},
		{"a janitor restart after a corrupted ledger is a violation", map[string]int{"janitor": 1}, []FaultKind{FaultLedgerCorrupt}, 1},
		{"an agent restart after a kubelet restart is a violation", map[string]int{"agent": 1}, []FaultKind{FaultKubeletRestart}, 1},
		{"a janitor restart after a containerd restart is a violation", map[string]int{"janitor": 1}, []FaultKind{FaultContainerdRestart}, 1},
		{"no restart after a kubelet and a containerd restart is allowed", map[string]int{"agent": 0, "janitor": 0},
			[]FaultKind{FaultKubeletRestart, FaultContainerdRestart}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantViolations(t, NoUnexpectedRestarts(tc.restarts, AllowedRestarts(tc.faults, 2)), tc.want, InvNoRestarts)
		})
	}
}

func TestAJanitorReplicasSeriesIsSplitByItsRole(t *testing.T) {
	for _, tc := range []struct {
		name, comp, metrics, want string
	}{
		{"the agent's series is its pod and restarts", "agent", "go_goroutines 40\n", "agent/p#1"},
		{"a janitor holding the lease is its leader series", "janitor", "pressure_janitor_leader 1\ngo_goroutines 31\n", "janitor/p#1 leader"},
		{"a janitor without the lease is its standby series", "janitor", "pressure_janitor_leader 0\ngo_goroutines 13\n", "janitor/p#1 standby"},
		{"a janitor without the metric is a standby", "janitor", "go_goroutines 13\n", "janitor/p#1 standby"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := seriesID(tc.comp, "p", 1, tc.metrics); got != tc.want {
				t.Errorf("seriesID = %q, want %q", got, tc.want)
			}
		})
	}
}
