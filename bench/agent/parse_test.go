package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseStressLog(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 16, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		log  string
		want []alloc
	}{
		{"alloc lines are read in order and other events skipped",
			"2026-11-29T16:00:00Z stdout F {\"t\":\"2026-11-29T16:00:00Z\",\"event\":\"ramp\",\"rate\":1}\n" +
				"2026-11-29T16:00:00Z stdout F {\"t\":\"2026-11-29T16:00:00Z\",\"event\":\"alloc\",\"bytes\":4194304}\n" +
				"2026-11-29T16:00:01Z stdout F {\"t\":\"2026-11-29T16:00:01.5Z\",\"event\":\"alloc\",\"bytes\":8388608}\n",
			[]alloc{{t0, 4 << 20}, {t0.Add(1500 * time.Millisecond), 8 << 20}}},
		{"a partial last line and a line without bytes are skipped",
			"2026-11-29T16:00:00Z stdout F {\"t\":\"2026-11-29T16:00:00Z\",\"event\":\"alloc\"}\n" +
				"2026-11-29T16:00:00Z stdout P {\"t\":\"2026-11-29T16:00:00Z\",\"ev", nil},
		{"empty log", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := parseStressLog(tt.log)
			if diff := cmp.Diff(got, tt.want, cmp.AllowUnexported(alloc{})); diff != "" {
				t.Errorf("parseStressLog (-got +want):\n%s", diff)
			}
		})
	}
}

func TestParseAgentLogFindsFirstEvictionOfThePodAndEveryVictimOfTheRun(t *testing.T) {
	log := `{"time":"2026-11-29T16:00:01.5Z","level":"INFO","msg":"start"}
{"time":"2026-11-29T16:00:01.6Z","level":"INFO","msg":"evict","pod":"bench/earlier","outcome":"evicted"}
{"time":"2026-11-29T16:00:02.25Z","level":"INFO","msg":"evict","pod":"bench/stress","outcome":"evicted"}
{"time":"2026-11-29T16:00:02.3Z","level":"INFO","msg":"killed on the node: OOM closer than the eviction","pod":"bench/stress"}
{"time":"2026-11-29T16:00:03Z","level":"INFO","msg":"evict","pod":"bench/stress","outcome":"in-flight"}
{"time":"2026-11-29T16:00:04Z","level":"INFO","msg":"evict","pod":"bench/burst","outcome":"evicted"}
not json`
	at, victims, trend := parseAgentLog(log, "bench/stress", time.Date(2026, 11, 29, 16, 0, 2, 0, time.UTC))
	if want := time.Date(2026, 11, 29, 16, 0, 2, 250e6, time.UTC); !at.Equal(want) {
		t.Errorf("first eviction at %v, want %v", at, want)
	}
	if diff := cmp.Diff(victims, []string{"bench/stress", "bench/burst"}); diff != "" {
		t.Errorf("victims (-got +want):\n%s", diff)
	}
	if !trend {
		t.Error("trend kill not seen")
	}
}

func TestPercentileIsNearestRank(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3, 6, 7, 8, 9, 10}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{50, 5}, {99, 10}, {100, 10}, {10, 1}} {
		if got := percentile(ds, tt.p); got != tt.want {
			t.Errorf("percentile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
}

func FuzzParseStressLog(f *testing.F) {
	f.Add("2026-11-29T16:00:00Z stdout F {\"t\":\"2026-11-29T16:00:00Z\",\"event\":\"alloc\",\"bytes\":4194304}\n")
	f.Add("x y z {")
	f.Fuzz(func(t *testing.T, s string) {
		for _, a := range parseStressLog(s) {
			if a.t.IsZero() {
				t.Errorf("alloc without a time from %q", s)
			}
		}
	})
}

func FuzzParseAgentLog(f *testing.F) {
	f.Add(`{"time":"2026-11-29T16:00:02.25Z","msg":"evict","pod":"bench/stress","outcome":"evicted"}`, "bench/stress")
	f.Add("[", "")
	f.Fuzz(func(t *testing.T, s, pod string) {
		_, victims, _ := parseAgentLog(s, pod, time.Time{})
		seen := map[string]bool{}
		for _, v := range victims {
			if seen[v] {
				t.Errorf("victim %q twice", v)
			}
			seen[v] = true
		}
	})
}
