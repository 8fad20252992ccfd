package notify

import (
	"context"
	"math"
	"time"

	"k8s.io/utils/clock"

	"github.com/kube-pressure/pressure/internal/policy"
)

// DefaultPollInterval is the fast-poll fallback's default period.
const DefaultPollInterval = 25 * time.Millisecond

// Poller reads a value (the available amount of a signal) every Interval and signals when it crosses
// Threshold in either direction (below, or back to at least Threshold) or moves by more than Delta
// since the last signal. It is the fallback where no kernel notification is available.
type Poller struct {
	// Read returns the current available amount; an error skips this tick.
	Read func() (int64, error)
	// Interval between reads near the threshold; 0 means DefaultPollInterval.
	Interval time.Duration
	// MaxInterval, when above Interval, makes the poll adaptive: after a read of v it waits
	// (v − Threshold) / RampRate, bounded by Interval and MaxInterval, so that a fall at RampRate or
	// slower is seen within Interval of the crossing while a value far above the threshold costs
	// few reads.
	MaxInterval time.Duration
	// RampRate is the fastest fall of the value per second that the adaptive poll must not miss.
	RampRate int64
	// Threshold: a change of (value < Threshold) between two reads signals.
	Threshold int64
	// Delta: when > 0, a change of more than Delta since the last signal also signals.
	Delta int64
	// Clock provides the ticker; nil means the real clock.
	Clock clock.WithTicker
	// OnError, if set, receives read errors (the shell logs and counts them).
	OnError func(error)
	// Paused, if set, is asked before each read: while it returns true the poller skips its reads and
	// asks again after Interval (the agent pauses it while a sync reads the same cgroup files and
	// decides: reading them beside it only slows the sync down, and the sync re-arms the poll).
	Paused func() bool
}

// pollState is what the poller remembers between reads.
type pollState struct {
	seen      bool
	below     bool
	lastFired int64
}

// step folds one reading into the state and reports whether to signal. The first reading signals only
// when it is already below the threshold.
func (p *Poller) step(s *pollState, v int64) bool {
	below := v < p.Threshold
	fire := false
	switch {
	case !s.seen:
		fire = below
	case below != s.below:
		fire = true
	case p.Delta > 0 && absDiff(v, s.lastFired) > p.Delta:
		fire = true
	}
	if fire || !s.seen {
		s.lastFired = v
	}
	s.seen, s.below = true, below
	return fire
}

func absDiff(a, b int64) int64 {
	if a > b {
		return a - b
	}
	return b - a
}

// NextInterval is how long the poller waits after a read of v.
func (p *Poller) NextInterval(v int64) time.Duration {
	iv := p.Interval
	if iv <= 0 {
		iv = DefaultPollInterval
	}
	if v <= p.Threshold {
		return iv
	}
	margin := v - p.Threshold
	if margin < 0 { // overflow of a value far above a negative threshold
		margin = math.MaxInt64
	}
	return policy.NextPoll(margin, iv, p.MaxInterval, p.RampRate)
}

// Run reads once immediately, then again after NextInterval of the last value (Interval after a
// failed read or a paused tick), until ctx is cancelled (returns nil).
func (p *Poller) Run(ctx context.Context, ch chan<- struct{}) error {
	c := p.Clock
	if c == nil {
		c = clock.RealClock{}
	}
	var t clock.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	var s pollState
	for {
		next := p.tick(&s, ch)
		if t == nil {
			t = c.NewTimer(next)
		} else {
			t.Reset(next)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
	}
}

// tick reads once, unless paused, signals on ch when the read says so, and returns how long to wait.
// A paused tick keeps the state of the last read, so that a crossing during the pause signals at the
// first read after it.
func (p *Poller) tick(s *pollState, ch chan<- struct{}) time.Duration {
	if p.Paused != nil && p.Paused() {
		return p.NextInterval(p.Threshold)
	}
	v, err := p.Read()
	if err != nil {
		if p.OnError != nil {
			p.OnError(err)
		}
		return p.NextInterval(p.Threshold)
	}
	if p.step(s, v) {
		signal(ch)
	}
	return p.NextInterval(v)
}
