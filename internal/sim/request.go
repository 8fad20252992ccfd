package sim

import (
	"slices"
	"time"
)

// PlanGap is the longest gap between two of the recorded agent's evictions taken as two requests of
// one plan: the shell carries a plan's evictions out one after another, each in 0.1-0.4 s on the soak's
// node; a longer gap is mostly two plans (soak seed 20261205 episode 63: 0.95 s between two plans, which
// taken for one request made the simulated agent late by a plan).
const PlanGap = 500 * time.Millisecond

// AgentRequest is how long the recorded pressure-agent took per eviction within a plan (the median gap
// between consecutive evictions of its ledger under PlanGap apart), and how many such gaps the
// recording holds; 0, 0 when it holds none. Timing.AgentRequest replays it: soak seed 20261205 episode
// 33, where the agent took 0.3-0.4 s per eviction (the Eviction API's answer, the ledger's write, the
// Events) and its next sync came only after three of them, when the band's credit had shrunk: a model
// that evicted all three at once and synced again at once saw the pressure end, and not the next victim.
func (r Recording) AgentRequest() (time.Duration, int) {
	var at []time.Time
	for _, p := range r.Pods {
		if p.Info.End == EndEvicted && p.Info.Evictor() == ActorAgent && !p.Info.Ended.IsZero() {
			at = append(at, p.Info.Ended)
		}
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	var gaps []time.Duration
	for i := 1; i < len(at); i++ {
		if g := at[i].Sub(at[i-1]); g > 0 && g < PlanGap {
			gaps = append(gaps, g)
		}
	}
	if len(gaps) == 0 {
		return 0, 0
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2], len(gaps)
}

// AgentEviction is how long the recorded pressure-agent's evictions took from the request until the
// pod's memory left its local reads (localRelease), the median over its evictions whose release the
// reads show, and how many those are; 0, 0 when none. The ledger dates an eviction after the Eviction
// API answered, request (Timing.AgentRequest) after the request started, so each is measured from its
// ledger time less request; one released before that counts as 0. Timing.AgentEviction replays it: the
// soak's pods exit on SIGTERM within tens of milliseconds, and a model that kept an evicted pod's memory
// for its 1 s estimate credited it in flight while the real node had it back (soak seed 20261205
// episode 33's rerun: 0.15 s).
func (r Recording) AgentEviction(request time.Duration) (time.Duration, int) {
	s, reads := r.localReads()
	var took []time.Duration
	for _, p := range r.Pods {
		if p.Info.End != EndEvicted || p.Info.Evictor() != ActorAgent || p.Info.Ended.IsZero() {
			continue
		}
		uid := p.Info.Candidate.UID
		if at, _, ok := localRelease(s, reads[uid], uid, p.Info.Ended); ok {
			took = append(took, max(0, at.Sub(p.Info.Ended.Add(-request))))
		}
	}
	if len(took) == 0 {
		return 0, 0
	}
	slices.Sort(took)
	return took[len(took)/2], len(took)
}
