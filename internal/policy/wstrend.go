package policy

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// wsTrend is a memory signal's recent raw observations at distinct times, oldest first: the newest one
// at least the rate span older than the latest, and every later one. The backstop's trend is the fall
// over that span, not between two adjacent samples: near a threshold the agent samples every 25 ms, and
// a steady page-cache pod's working set moves by a few pages between samples, which over 25 ms reads
// as tens of MiB/s and projects a crossing that never comes.
type wsTrend struct{ obs []signal.Observation }

// add returns the trend with o appended when it is newer than the latest, trimmed to span. It never
// changes t's slice (State copies share it).
func (t wsTrend) add(o signal.Observation, span time.Duration) wsTrend {
	if n := len(t.obs); n > 0 && !o.Time.After(t.obs[n-1].Time) {
		return t
	}
	start := 0
	for start+1 < len(t.obs) && o.Time.Sub(t.obs[start+1].Time) >= span {
		start++
	}
	out := make([]signal.Observation, 0, len(t.obs)-start+1)
	out = append(out, t.obs[start:]...)
	return wsTrend{obs: append(out, o)}
}

// change returns the trend's change from its oldest to its latest observation and the span it covers;
// ok is false with fewer than two observations.
func (t wsTrend) change() (delta int64, span time.Duration, ok bool) {
	if len(t.obs) < 2 {
		return 0, 0, false
	}
	first, last := t.obs[0], t.obs[len(t.obs)-1]
	return last.Available - first.Available, last.Time.Sub(first.Time), true
}

// fall returns the working set's fall rate (bytes/s, positive when falling) from the trend's oldest to
// its latest observation and the span it covers; ok is false with fewer than two observations.
func (t wsTrend) fall() (rate float64, span time.Duration, ok bool) {
	delta, span, ok := t.change()
	if !ok {
		return 0, 0, false
	}
	return float64(-delta) / span.Seconds(), span, true
}

// rise returns the trend's rise per second from its oldest to its latest observation, over at least
// minSpan; false with fewer than two observations.
func (t wsTrend) rise(minSpan time.Duration) (float64, bool) {
	delta, span, ok := t.change()
	if !ok {
		return 0, false
	}
	return float64(delta) / max(span, minSpan).Seconds(), true
}

// steady returns why the kubelet would not act on o (the raw working-set observation, the trend's
// latest) although it is within the margin of the kubelet's threshold kubelet: it is above it and its
// fall over the trend's span (none, or too slow) does not cross it within horizon. "" when the kubelet
// would act.
func (t wsTrend) steady(o signal.Observation, kubelet int64, horizon time.Duration) string {
	if o.Available < kubelet {
		return ""
	}
	rate, span, ok := t.fall()
	if !ok || rate <= 0 {
		return fmt.Sprintf("the working set is not falling: the kubelet would not cross its threshold within %s", horizon)
	}
	eta := time.Duration(float64(o.Available-kubelet) / rate * float64(time.Second))
	if eta <= horizon {
		return ""
	}
	return fmt.Sprintf("the working set falls %s/s (over %s): it would cross the kubelet's threshold in %s, beyond %s",
		threshold.FormatHuman(int64(rate), true), span.Round(time.Millisecond), eta.Round(time.Millisecond), horizon)
}

// lastTwo returns the trend's last two observations (zero ones when it has fewer: no trend).
func (t wsTrend) lastTwo() (signal.Observation, signal.Observation) {
	if n := len(t.obs); n >= 2 {
		return t.obs[n-2], t.obs[n-1]
	}
	return signal.Observation{}, signal.Observation{}
}
