package explain

import (
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

func row(sig signal.Signal, th string, avail, resolved, capacity int64) SignalRow {
	u := unitOfSignal(sig)
	return SignalRow{Signal: string(sig), Threshold: th, Observed: true, Available: exact(avail, u),
		Capacity: exact(capacity, u), Resolved: exact(resolved, u), Margin: exact(avail-resolved, u),
		Met: avail < resolved, sig: sig, avail: avail, margn: avail - resolved}
}

func TestTightestMarginIsRelativeToCapacityWithATotalOrder(t *testing.T) {
	const gi = int64(1) << 30
	for _, tc := range []struct {
		name string
		rows []SignalRow
		want string
		ok   bool
	}{
		{"nothing observed has no margin", []SignalRow{{Signal: "memory.available", Threshold: "memory.available<100Mi"}}, "", false},
		{"an unwatched signal is not a margin", []SignalRow{{Signal: "pid.available", Observed: true}}, "", false},
		{"relative margin wins over absolute bytes", []SignalRow{
			row(signal.MemoryAvailable, "memory.available<1Gi", 3*gi, gi, 16*gi),      // 2Gi of 16Gi: 12.5%
			row(signal.NodeFsAvailable, "nodefs.available<10%", 20*gi, 10*gi, 100*gi), // 10Gi of 100Gi: 10%
		}, "nodefs.available", true},
		{"a met threshold is tighter than any unmet one", []SignalRow{
			row(signal.NodeFsAvailable, "nodefs.available<10%", 11*gi, 10*gi, 100*gi),
			row(signal.PIDAvailable, "pid.available<1000", 900, 1000, 4000000),
		}, "pid.available", true},
		{"a tie goes to the signal name", []SignalRow{
			row(signal.NodeFsAvailable, "nodefs.available<10%", 20*gi, 10*gi, 100*gi),
			row(signal.ImageFsAvailable, "imagefs.available<10%", 20*gi, 10*gi, 100*gi),
		}, "imagefs.available", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok := TightestMargin(Report{Signals: tc.rows})
			if ok != tc.ok || m.Signal != tc.want {
				t.Errorf("TightestMargin = %q, %v; want %q, %v", m.Signal, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestTrendOfTheTightestSignal(t *testing.T) {
	const mi = int64(1) << 20
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	rep := func(avail int64, at time.Time) Report {
		r := row(signal.MemoryAvailable, "memory.available<100Mi", avail, 100*mi, 16<<30)
		r.StatsTime = at
		return Report{Signals: []SignalRow{r}}
	}
	for _, tc := range []struct {
		name      string
		prev, cur Report
		want      Trend
	}{
		{"falling 10Mi per 10s with 50Mi left reaches it in 50s", rep(160*mi, t0), rep(150*mi, t0.Add(10*time.Second)),
			Trend{Known: true, Falling: true, TimeToThreshold: 50 * time.Second}},
		{"rising is not falling", rep(150*mi, t0), rep(160*mi, t0.Add(10*time.Second)), Trend{Known: true}},
		{"the same cached stats give no trend", rep(160*mi, t0), rep(150*mi, t0), Trend{}},
		{"already met is falling with no time left", rep(100*mi, t0), rep(90*mi, t0.Add(10*time.Second)),
			Trend{Known: true, Falling: true}},
		{"another threshold has no trend", rep(160*mi, t0), Report{}, Trend{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TrendOf(tc.prev, tc.cur, "memory.available<100Mi"); got != tc.want {
				t.Errorf("TrendOf = %+v, want %+v", got, tc.want)
			}
		})
	}
}
