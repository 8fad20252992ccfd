package policy

import (
	"fmt"
	"sort"
	"time"
)

// applyOutcomes feeds what happened to earlier actions into the state, in time order: the API backoff
// (only a call that got no answer opens it, only an answer resets it), the flights (an action that did
// nothing gives the pod back), PodDisruptionBudget refusals and the minute window's tokens.
func (st *State) applyOutcomes(outs []Outcome, cfg Config, p *Plan) {
	sorted := append([]Outcome(nil), outs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		if a.UID != b.UID {
			return a.UID < b.UID
		}
		return a.Action < b.Action
	})
	for _, o := range sorted {
		switch o.API {
		case ContactUnavailable:
			d := st.backoff.fail(o.At, cfg)
			p.tr().add(KindOutcome, o.UID, fmt.Sprintf("%s %s: the API did not answer, backoff %s until %s", o.Action, o.Result, d, stamp(st.backoff.until)))
		case ContactAnswered:
			st.backoff = backoff{}
		}
		switch o.Action {
		case ActionEvict:
			st.evictOutcome(o, p)
		case ActionKill:
			st.killOutcome(o, p)
		}
	}
}

func (st *State) evictOutcome(o Outcome, p *Plan) {
	f, ok := st.flights[o.UID]
	switch o.Result {
	case ResultEvicted, ResultGone, ResultKilled, ResultDryRun:
		return // the eviction is under way (or the pod is gone): the flight stays until the pod leaves
	case ResultRefused:
		st.refused[o.UID] = refusal{at: o.At, hard: f.hard}
		p.tr().add(KindOutcome, o.UID, "eviction refused by a PodDisruptionBudget: paused, the next pod is tried")
	case ResultNotAttempted:
		st.refund(o.UID)
		p.tr().add(KindOutcome, o.UID, fmt.Sprintf("eviction %s: nothing was requested, not counted", o.Result))
	default:
		p.tr().add(KindOutcome, o.UID, fmt.Sprintf("eviction %s: the pod is a candidate again", o.Result))
	}
	if ok {
		f.evicting = false
		st.land(o.UID, f)
	}
}

func (st *State) killOutcome(o Outcome, p *Plan) {
	f, ok := st.flights[o.UID]
	if o.Result == ResultKilled || !ok {
		return
	}
	p.tr().add(KindOutcome, o.UID, fmt.Sprintf("kill %s: not counted", o.Result))
	f.killing = false
	st.land(o.UID, f)
}

// land keeps a flight that still has a reason, and drops one that has none.
func (st *State) land(uid string, f flight) {
	if f.evicting || f.killing || f.observed {
		st.flights[uid] = f
		return
	}
	delete(st.flights, uid)
}

// refund gives back the newest token of uid: the request was never made.
func (st *State) refund(uid string) {
	for i := len(st.tokens) - 1; i >= 0; i-- {
		if st.tokens[i].uid == uid {
			st.tokens = append(st.tokens[:i:i], st.tokens[i+1:]...)
			return
		}
	}
}

// available returns how many requests the minute window still allows at now, dropping old tokens.
func (st *State) available(now time.Time, cfg Config) int {
	keep := st.tokens[:0:0]
	for _, t := range st.tokens {
		if now.Sub(t.at) < time.Minute {
			keep = append(keep, t)
		}
	}
	st.tokens = keep
	return max(0, cfg.MaxEvictionsPerMinute-len(keep))
}

// fail doubles the backoff (starting at APIBackoffMin, at most APIBackoffMax) from at.
func (b *backoff) fail(at time.Time, cfg Config) time.Duration {
	switch {
	case b.cur == 0:
		b.cur = cfg.APIBackoffMin
	default:
		b.cur = min(2*b.cur, cfg.APIBackoffMax)
	}
	b.until = at.Add(b.cur)
	return b.cur
}

// blocked reports whether now is inside the backoff.
func (b backoff) blocked(now time.Time) bool { return now.Before(b.until) }

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }
