package vm

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestCrossingToRequestRunsFromTheLastDownwardCrossingBeforeTheRequest(t *testing.T) {
	base := time.Date(2026, 12, 6, 1, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	const mi = 1 << 20
	line := func(ms int, avail int64) string {
		return markAvail + strconv.FormatInt(at(ms).UnixNano(), 10) + " " + strconv.FormatInt(avail, 10)
	}
	evict := `2026-12-06T01:00:00.300000000Z stderr F {"time":"2026-12-06T01:00:00.301Z","level":"INFO","msg":"evict","pod":"race/stress",` +
		`"signal":"allocatableMemory.available","observed":"340Mi","threshold":"356Mi","requested_at":"2026-12-06T01:00:00.265Z"}`
	lines := []string{
		line(0, 400*mi), line(10, 355*mi), // a first dip below 356Mi...
		line(20, 370*mi),                                        // ...and back above: not the crossing
		line(200, 360*mi), line(210, 350*mi), line(220, 340*mi), // the crossing at 210 ms
		line(300, 330*mi), // after the request
	}
	var avail []availSample
	for _, l := range lines {
		s, ok := parseAvail(l)
		if !ok {
			t.Fatalf("parseAvail(%q) failed", l)
		}
		avail = append(avail, s)
	}
	ev, ok := parseEvictLine(evict)
	if !ok {
		t.Fatalf("parseEvictLine(%q) failed", evict)
	}
	for _, tc := range []struct {
		name    string
		pod     string
		signal  string
		want    time.Duration
		wantErr string
	}{
		{"the stress pod's request 55 ms after the crossing", "race/stress", "", 55 * time.Millisecond, ""},
		{"another pod has no evict line", "race/other", "", 0, "no evict line for race/other"},
		{"another signal is not what the watcher samples", "race/stress", "memory.available", 0, "acted on memory.available"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := ev
			if tc.signal != "" {
				e.Signal = tc.signal
			}
			got, _, err := crossingToRequest(avail, []evictLine{e}, tc.pod)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %s, %v; want %s", got, err, tc.want)
			}
		})
	}
	if _, _, err := crossingToRequest(avail[:1], []evictLine{ev}, "race/stress"); err == nil || !strings.Contains(err.Error(), "no sample at or below 356Mi") {
		t.Errorf("without a sample below the threshold: error %v, want no sample at or below 356Mi", err)
	}
	if _, ok := parseEvictLine(`2026 stderr F {"msg":"pressure-agent started"}`); ok {
		t.Errorf("a line other than evict parsed as an evict line")
	}
}

func TestTheSplitSaysWhereTheLatencyWentFromTheEvictLinesPhases(t *testing.T) {
	evict := `2026 stderr F {"msg":"evict","pod":"race/stress","signal":"allocatableMemory.available","threshold":"356Mi",` +
		`"sync_started_at":"2026-12-06T01:00:00.190Z","read_done_at":"2026-12-06T01:00:00.250Z",` +
		`"decided_at":"2026-12-06T01:00:00.253Z","sync_cpu":"4.1ms","requested_at":"2026-12-06T01:00:00.265Z"}`
	ev, ok := parseEvictLine(evict)
	if !ok {
		t.Fatalf("parseEvictLine(%q) failed", evict)
	}
	// The crossing at 01:00:00.210: the sync had started 20 ms before it and caught it in its read.
	want := "sync started -20ms after the crossing, read 60ms, decided 3ms, request 12ms; the agent's CPU from the sync's start to its decision 4.1ms"
	if got := ev.split(55 * time.Millisecond); got != want {
		t.Errorf("split %q, want %q", got, want)
	}
	old, _ := parseEvictLine(`2026 stderr F {"msg":"evict","pod":"race/stress","requested_at":"2026-12-06T01:00:00.265Z"}`)
	if got := old.split(55 * time.Millisecond); got != "" {
		t.Errorf("an evict line without the phases split into %q, want nothing", got)
	}
}
