package agent

import (
	"time"
)

// bucket is a token bucket for evictions: Burst tokens, refilled at Rate per second. It is used from the
// sync goroutine only.
type bucket struct {
	Rate   float64
	Burst  int
	tokens float64
	last   time.Time
}

// newBucket returns a full bucket.
func newBucket(rate float64, burst int) *bucket {
	return &bucket{Rate: rate, Burst: burst, tokens: float64(burst)}
}

// available refills the bucket up to now and returns the whole tokens in it.
func (b *bucket) available(now time.Time) int {
	if !b.last.IsZero() && now.After(b.last) {
		b.tokens = min(float64(b.Burst), b.tokens+now.Sub(b.last).Seconds()*b.Rate)
	}
	if b.last.IsZero() || now.After(b.last) {
		b.last = now
	}
	return int(b.tokens)
}

// take removes n tokens (never below zero).
func (b *bucket) take(n int) {
	b.tokens = max(0, b.tokens-float64(n))
}

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
