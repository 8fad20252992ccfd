package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	cases := []struct {
		name string
		xs   []float64
		want float64
	}{
		{name: "odd count is the middle value whatever the order", xs: []float64{300, 100, 200}, want: 200},
		{name: "even count is the mean of the middle two", xs: []float64{4, 1, 3, 2}, want: 2.5},
		{name: "no rounds is zero", want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := median(tc.xs); got != tc.want {
				t.Errorf("median(%v) = %v; want %v", tc.xs, got, tc.want)
			}
		})
	}
}

func TestSumAddsOnlyMatchingLabels(t *testing.T) {
	samples := map[string]float64{
		`pressure_janitor_delete_not_applied_total{result="conflict"}`:                        2,
		`pressure_janitor_delete_not_applied_total{result="not_found"}`:                       3,
		`pressure_janitor_errors_total{namespace="a",operation="delete"}`:                     1,
		`pressure_janitor_errors_total{namespace="b",operation="delete"}`:                     4,
		`pressure_janitor_errors_total{namespace="b",operation="evidence"}`:                   8,
		`pressure_janitor_delete_not_applied_total_other{result="not_found"}`:                 100,
		`pressure_janitor_pods_deleted_total{dry_run="false",namespace="a",reason="Evicted"}`: 7,
	}
	for _, tc := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{name: metricNotApplied, want: 5},
		{name: metricNotApplied, labels: []string{`result="not_found"`}, want: 3},
		{name: metricErrors, labels: []string{`operation="delete"`}, want: 5},
		{name: metricDeleted, want: 7},
	} {
		if got := sum(samples, tc.name, tc.labels...); got != tc.want {
			t.Errorf("sum(%s, %q) = %v; want %v", tc.name, tc.labels, got, tc.want)
		}
	}
}

func TestReadLogCountsDeleteRequestsPerPod(t *testing.T) {
	log := `{"time":"2026-12-03T07:00:00Z","level":"INFO","msg":"waiting for the lease","identity":"a"}
not json: a line from somewhere else
{"time":"2026-12-03T07:00:01Z","level":"INFO","msg":"janitor started","identity":"a"}
{"time":"2026-12-03T07:00:02Z","level":"INFO","msg":"deleting terminal pod","pod":"p1","namespace":"n"}
{"time":"2026-12-03T07:00:03Z","level":"ERROR","msg":"delete pod","pod":"n/p1","err":"timeout"}
{"time":"2026-12-03T07:00:04Z","level":"INFO","msg":"deleting terminal pod","pod":"p1","namespace":"n"}
{"time":"2026-12-03T07:00:05Z","level":"INFO","msg":"deleting terminal pod","pod":"p2","namespace":"n","terminating":true}
`
	path := filepath.Join(t.TempDir(), "janitor.log")
	if err := os.WriteFile(path, []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readLog(path)
	if err != nil {
		t.Fatalf("readLog: %v", err)
	}
	if got.attempts["n/p1"] != 2 || got.attempts["n/p2"] != 1 || len(got.attempts) != 2 {
		t.Errorf("attempts %v; want n/p1:2 n/p2:1", got.attempts)
	}
	if got.terminating != 1 {
		t.Errorf("terminating %d; want 1", got.terminating)
	}
	at := func(s int) time.Time { return time.Date(2026, 12, 3, 7, 0, s, 0, time.UTC) }
	if !got.started.Equal(at(1)) || !got.firstDel.Equal(at(2)) {
		t.Errorf("started %v, first DELETE %v; want %v, %v", got.started, got.firstDel, at(1), at(2))
	}
}

func TestGCTracePeakIsTheLargestHeapOfAnyCycleAndLiveIsTheForcedOnes(t *testing.T) {
	log := strings.Join([]string{
		`{"time":"2026-12-03T14:00:00Z","level":"INFO","msg":"janitor started"}`,
		`gc 1 @0.012s 2%: 0.011+0.83+0.003 ms clock, 0.022+0.12/0.71/0.33+0.007 ms cpu, 3->4->1 MB, 4 MB goal, 0 MB stacks, 0 MB globals, 2 P`,
		`gc 2 @1.5s 4%: 0.01+12+0.01 ms clock, 0.02+1/10/2+0.02 ms cpu, 90->97->60 MB, 120 MB goal, 0 MB stacks, 0 MB globals, 2 P`,
		`gc 3 @130s 1%: 0.01+9+0.01 ms clock, 0.02+1/8/2+0.02 ms cpu, 95->95->58 MB, 120 MB goal, 0 MB stacks, 0 MB globals, 2 P (forced)`,
	}, "\n")
	got, err := readGCTrace(strings.NewReader(log))
	if want := (gcSummary{peak: 97 << 20, forcedLive: 58 << 20, cycles: 3}); err != nil || got != want {
		t.Errorf("readGCTrace = %+v, %v; want %+v", got, err, want)
	}
}
