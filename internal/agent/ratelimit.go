package agent

import (
	"time"
)

// window limits events to Max in any sliding Span. It is used from the sync goroutine only.
type window struct {
	Max  int
	Span time.Duration
	at   []time.Time // times of the events still inside the span, oldest first
}

// available returns how many events may happen at now.
func (w *window) available(now time.Time) int {
	keep := w.at[:0]
	for _, t := range w.at {
		if now.Sub(t) < w.Span {
			keep = append(keep, t)
		}
	}
	w.at = keep
	return max(0, w.Max-len(w.at))
}

// take records one event at now.
func (w *window) take(now time.Time) { w.at = append(w.at, now) }

// backoff is an exponential backoff between Min and Max, driven by the caller's clock readings.
type backoff struct {
	Min, Max time.Duration
	cur      time.Duration
	until    time.Time
}

// blocked reports whether now is still inside the backoff window.
func (b *backoff) blocked(now time.Time) bool { return now.Before(b.until) }

// fail doubles the delay (starting at Min) and opens a window from now.
func (b *backoff) fail(now time.Time) time.Duration {
	switch {
	case b.cur == 0:
		b.cur = b.Min
	default:
		b.cur = min(2*b.cur, b.Max)
	}
	b.until = now.Add(b.cur)
	return b.cur
}

// succeed resets the backoff.
func (b *backoff) succeed() { b.cur, b.until = 0, time.Time{} }
