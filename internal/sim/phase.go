package sim

import (
	"sort"
	"time"
)

// phaseWindow is how far before the first recorded eviction InferPhase looks: long enough to pin the
// period, short enough that the sync's varying duration does not move the phase much.
const phaseWindow = 90 * time.Second

// Phase is InferPhase's estimate of the recorded kubelet's housekeeping loop.
type Phase struct {
	// FirstSync is the loop's first sync after the recording's start (Timing.FirstSync).
	FirstSync time.Duration
	// Period is the time from one housekeeping sync to the next: the interval plus the sync's own
	// duration (Timing.SyncDuration = Period − Timing.Housekeeping).
	Period time.Duration
	// Agree of Samples memory samples of the window are explained by the loop's syncs.
	Agree, Samples int
	// FromStatsTimes says the phase came from the recording's stats times to the millisecond
	// (Recording.StatsTimes; Agree and Samples count those), not from the Summary's whole seconds.
	FromStatsTimes bool
}

// InferPhase estimates when the recorded kubelet's housekeeping loop syncs. Each sync refreshes the
// node's and the pods cgroup's memory stats, whose time (whole seconds in the Summary) is then the
// sync's; while it evicts nothing the loop syncs every interval plus the sync's own duration (on the
// e2e node 10.1-10.3 s: the loop's second moves by one every few syncs), while cAdvisor's own refreshes
// come every 10-20 s. InferPhase looks at the distinct sample seconds of the phaseWindow before the
// first recorded eviction (or of the whole recording) and searches the period (interval to interval +
// 1 s, by 10 ms) and offset (by 50 ms) whose syncs fall in the most of those seconds. The best fits
// place the next sync after the window anywhere in a range: InferPhase takes the fit whose next sync
// is nearest the middle of that range, which halves the worst error. ok is false when fewer than three
// samples agree. A recording with the kubelet's stats times to the millisecond (Recording.StatsTimes)
// gives the syncs themselves: phaseFromStatsTimes, tried first.
func (r Recording) InferPhase(interval time.Duration) (Phase, bool) {
	if interval <= 0 {
		return Phase{}, false
	}
	end := r.firstKubeletEviction()
	if ph, ok := r.phaseFromStatsTimes(interval, end); ok {
		return ph, true
	}
	seen := map[int64]bool{}
	var secs []time.Time
	for _, s := range append(append([]MemorySample{}, r.NodeMemory...), r.PodsMemory...) {
		if sec := s.At.Truncate(time.Second); sec.Before(end) && !sec.Before(end.Add(-phaseWindow)) && !seen[sec.Unix()] {
			seen[sec.Unix()] = true
			secs = append(secs, sec)
		}
	}
	sort.Slice(secs, func(i, j int) bool { return secs[i].Before(secs[j]) })
	ph := Phase{Samples: len(secs)}
	if len(secs) == 0 {
		return ph, false
	}
	origin := secs[0]
	type fit struct {
		period, offset time.Duration
		next           time.Time
	}
	var best []fit
	for period := interval; period <= interval+time.Second; period += 10 * time.Millisecond {
		for offset := time.Duration(0); offset < period; offset += 50 * time.Millisecond {
			n := agreeing(secs, origin.Add(offset), period)
			switch {
			case n > ph.Agree:
				ph.Agree, best = n, best[:0]
				fallthrough
			case n == ph.Agree:
				best = append(best, fit{period, offset, nextSync(origin.Add(offset), period, end)})
			}
		}
	}
	if ph.Agree < 3 {
		return ph, false
	}
	lo, hi := best[0].next, best[0].next
	for _, f := range best {
		if f.next.Before(lo) {
			lo = f.next
		}
		if f.next.After(hi) {
			hi = f.next
		}
	}
	mid := lo.Add(hi.Sub(lo) / 2)
	f := best[0]
	for _, g := range best {
		if (g.next.Sub(mid)).Abs() < (f.next.Sub(mid)).Abs() {
			f = g
		}
	}
	ph.Period = f.period
	ph.FirstSync = nextSync(origin.Add(f.offset), f.period, r.Start).Sub(r.Start)
	return ph, true
}

// firstKubeletEviction is when the first pod the recorded kubelet evicted ended (the recording's end
// when it evicted none).
func (r Recording) firstKubeletEviction() time.Time {
	end := r.End
	for _, p := range r.Pods {
		if p.Info.End == EndEvicted && p.Info.Evictor() == ActorKubelet && p.Info.Ended.Before(end) {
			end = p.Info.Ended
		}
	}
	return end
}

// agreeing counts the seconds in which a sync of the loop (at at + k·period) falls.
func agreeing(secs []time.Time, at time.Time, period time.Duration) int {
	n := 0
	for _, s := range secs {
		k := s.Sub(at) / period
		for _, c := range []time.Duration{k - 1, k, k + 1} {
			sync := at.Add(c * period)
			if !sync.Before(s) && sync.Before(s.Add(time.Second)) {
				n++
				break
			}
		}
	}
	return n
}

// nextSync is the loop's first sync (at + k·period, any integer k) at or after t.
func nextSync(at time.Time, period time.Duration, t time.Time) time.Time {
	k := t.Sub(at) / period
	s := at.Add(k * period)
	for s.Before(t) {
		s = s.Add(period)
	}
	for !s.Add(-period).Before(t) {
		s = s.Add(-period)
	}
	return s
}
