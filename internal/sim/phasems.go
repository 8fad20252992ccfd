package sim

import (
	"sort"
	"time"
)

// maxSyncDuration bounds the kubelet's eviction sync's own duration, from its fresh stats to the end of
// the sync: two of the loop's syncs are an interval plus at most this apart. On the e2e node the gap
// is 10.04-10.08 s, with one of 10.75 s in a minute of a busy node (docs/simulate.md).
const maxSyncDuration = time.Second

// minLoopChain is how many syncs in a row, each an interval (plus the sync's duration) after the one
// before, make the loop: two could be a loop sync and a notification that happened to follow it.
const minLoopChain = 3

// phaseFromStatsTimes places the loop on the stats times of the phaseWindow before end (the first
// recorded eviction): the latest chain of at least minLoopChain times, each an interval plus at most
// maxSyncDuration after the previous one, is the loop's syncs (the memcg notifier's syncs, and the
// loop's one right after an eviction's cleanup, are off it). The period is the chain's median gap,
// and the schedule goes through its last sync. ok is false when the recording has no such chain.
func (r Recording) phaseFromStatsTimes(interval time.Duration, end time.Time) (Phase, bool) {
	var ts []time.Time
	for _, t := range r.StatsTimes {
		if t.Before(end) && !t.Before(end.Add(-phaseWindow)) {
			ts = append(ts, t)
		}
	}
	ph := Phase{Samples: len(ts), FromStatsTimes: true}
	last, gaps := -1, []time.Duration(nil)
	for end := len(ts) - 1; end >= minLoopChain-1; end-- {
		if last >= 0 && ts[last].Sub(ts[end]) >= maxSyncDuration {
			break
		}
		g := loopChain(ts, end, interval)
		if len(g)+1 < minLoopChain {
			continue
		}
		// A notified sync just after the loop's last one also ends a chain (through the loop's sync
		// before): of the ends within a sync's duration of each other, the loop's last gap is the one
		// nearest the loop's usual gap.
		if last < 0 || offUsual(g) < offUsual(gaps) {
			last, gaps = end, g
		}
	}
	if last < 0 {
		return ph, false
	}
	ph.Agree, ph.Period = len(gaps)+1, medianGap(gaps)
	ph.FirstSync = nextSync(ts[last], ph.Period, r.Start).Sub(r.Start)
	return ph, true
}

// offUsual is how far a chain's last gap (gaps[0]) is from the median of its others (0 with no others).
func offUsual(gaps []time.Duration) time.Duration {
	if len(gaps) < 2 {
		return 0
	}
	return (gaps[0] - medianGap(gaps[1:])).Abs()
}

// loopChain follows the loop back from ts[last]: each step goes to the latest earlier time an interval
// to an interval plus maxSyncDuration before. It returns the gaps, latest first.
func loopChain(ts []time.Time, last int, interval time.Duration) []time.Duration {
	var gaps []time.Duration
	for cur := last; ; {
		next := -1
		for j := cur - 1; j >= 0; j-- {
			gap := ts[cur].Sub(ts[j])
			if gap > interval+maxSyncDuration {
				break
			}
			if gap >= interval {
				next = j
				break
			}
		}
		if next < 0 {
			return gaps
		}
		gaps = append(gaps, ts[cur].Sub(ts[next]))
		cur = next
	}
}

// medianGap is the median of gaps (the lower of the two middle ones for an even count).
func medianGap(gaps []time.Duration) time.Duration {
	s := append([]time.Duration{}, gaps...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[(len(s)-1)/2]
}
