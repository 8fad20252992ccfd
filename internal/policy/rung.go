package policy

import (
	"fmt"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// The reclaim rung of policy ReclaimAware. The backstop acts on the kubelet's working set once it nears
// the kubelet's own threshold, because the kubelet evicts on it whatever the estimate says. When it is
// only the gap between the working set and the non-reclaimable estimate that puts a memory signal under
// its threshold (the working set is under, the estimate is not), the cache can be reclaimed instead:
// the plan asks the shell to reclaim file pages of the pods that hold them (memory.reclaim on cgroup v2,
// a sized limit squeeze on v1), largest reclaimable first, sized to bring the working set back to the
// threshold plus its minimum reclaim (bounded by ReclaimAction.MaxBytes), never from a thrashing pod.
// The step then acts on the estimate (no eviction) while the reclaim settles. The policy evicts as
// before when the working set is already below the kubelet's own threshold or what the non-thrashing
// pods could give is not enough. When the reclaim failed, when the signal is still under after
// ReclaimAction.Settle, or when a reclaim of the signal was planned less than ReclaimAction.MinInterval
// ago, the rung has had its chance and the backstop without the rung decides (withoutRung: the working
// set's trend). Confirmed pressure (PSI and refaults) never reaches the rung: it is acted on as before.
// Growth of the usage other than page cache (growth.go) cuts through all of it: growth the pods show
// that would take the working set to the kubelet's threshold within the horizon evicts at once (while a
// reclaim settles, and with a fresh reclaim when even the reclaimed working set would be reached), and
// growth that is the pods in flight's holds even below the kubelet's threshold.

// ReclaimRequest is one reclaim to carry out.
type ReclaimRequest struct {
	// Signal is the memory signal it is for (the first, when a pod serves both).
	Signal signal.Signal
	// Pod is the pod whose cgroup to reclaim from; a zero UID means the pods cgroup (no pod's estimate
	// is known).
	Pod PodRef
	// Bytes is how much to ask the kernel to reclaim; Reclaimable the target's reclaimable file pages by
	// the estimate (Bytes is at most that).
	Bytes, Reclaimable int64
	// Why says why, in words.
	Why string
}

// Target names the request's cgroup: the pod, or "the pods cgroup".
func (r ReclaimRequest) Target() string {
	if r.Pod.UID == "" {
		return "the pods cgroup"
	}
	return r.Pod.String()
}

// rung is one signal's reclaim: when it was planned, whom it asked (by UID, "" for the pods cgroup),
// what came back, and whether it is spent (failed, or the signal still under after the settle time:
// the policy evicts until the signal is back above its threshold).
type rung struct {
	at        time.Time
	uids      map[string]bool
	requested int64
	reported  int
	freed     int64
	err       string
	spent     bool
}

// rungOff says why the rung is off ("" when it is on).
func rungOff(cfg Config, in Input) string {
	switch {
	case cfg.Policy != ReclaimAware:
		return "policy " + string(cfg.Policy)
	case !cfg.Reclaim.Action.Enabled:
		return "the reclaim rung is disabled (reclaim.action.enabled)"
	case in.ReclaimUnavailable != "":
		return "the agent cannot reclaim: " + in.ReclaimUnavailable
	}
	return ""
}

// reclaimOutcomes applies the reclaim outcomes to the signals' rungs.
func (st *State) reclaimOutcomes(outs []ReclaimOutcome, p *Plan) {
	sorted := append([]ReclaimOutcome(nil), outs...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if !sorted[i].At.Equal(sorted[j].At) {
			return sorted[i].At.Before(sorted[j].At)
		}
		return sorted[i].UID < sorted[j].UID
	})
	for _, o := range sorted {
		used := false
		for _, sig := range []signal.Signal{signal.AllocatableMemoryAvailable, signal.MemoryAvailable} {
			r, ok := st.rungs[sig]
			if !ok || !r.uids[o.UID] {
				continue
			}
			used = true
			r.reported++
			r.freed += max(0, o.Freed)
			if o.Err != "" && r.err == "" {
				r.err = o.Err
			}
			st.rungs[sig] = r
		}
		who := o.UID
		if who == "" {
			who = "pods cgroup"
		}
		switch {
		case !used:
			p.tr().add(KindReclaimAction, who, "reclaim outcome for no reclaim under way: ignored")
		case o.Err != "":
			p.tr().add(KindReclaimAction, who, fmt.Sprintf("reclaim failed at %s: %s", stamp(o.At), o.Err))
		default:
			p.tr().add(KindReclaimAction, who, fmt.Sprintf("reclaim freed %s at %s", threshold.FormatQuantity(o.Freed, true), stamp(o.At)))
		}
	}
}

// reclaimRung runs the rung over the plan's memory views (see above) and returns the snapshot the step
// acts on: a signal the rung holds off is observed at its non-reclaimable estimate.
func (st *State) reclaimRung(now time.Time, in Input, snap signal.Snapshot, ests []podReclaim, grows map[signal.Signal]growth,
	cfg Config, p *Plan) signal.Snapshot {
	st.reclaimOutcomes(in.Reclaims, p)
	off := rungOff(cfg, in)
	for i := range p.Reclaim {
		v := &p.Reclaim[i]
		sig := v.Signal
		o, ok := snap.Observations[sig]
		id, found := hardOf(p.Thresholds, sig, o)
		if !ok || !found {
			continue
		}
		t := p.Thresholds.Thresholds[id]
		limit := t.Value.Resolve(o.Capacity)
		if v.WorkingSet >= limit {
			if r, had := st.rungs[sig]; had {
				delete(st.rungs, sig)
				p.tr().add(KindReclaimAction, string(sig), fmt.Sprintf("back above %s (working set %s) since the reclaim at %s "+
					"(freed %s): done", threshold.FormatAvailable(limit, sig), threshold.FormatAvailable(v.WorkingSet, sig),
					stamp(r.at), threshold.FormatQuantity(r.freed, true)))
			}
			continue
		}
		if !v.Known || v.Confirmed || !v.Backstop || v.NonReclaimable < limit {
			continue // not the gap: confirmed pressure, or the estimate is under too
		}
		gq := threshold.MetQuantity(t, o.Capacity, true)
		goal := gq.Value()
		if off != "" {
			if v.WorkingSet < v.Kubelet {
				continue // the kubelet acts now: too late for a reclaim to avoid anything
			}
			reqs, enough, _ := reclaimTargets(*v, goal, ests, cfg)
			if enough {
				p.ReclaimAvoidable = append(p.ReclaimAvoidable, reqs...)
				p.tr().add(KindReclaimAction, string(sig), "reclaim would have avoided this eviction: "+describeReclaims(reqs)+
					" would bring the working set back to "+threshold.FormatAvailable(goal, sig)+"; not done: "+off)
			}
			continue
		}
		if st.rungStep(now, v, grows[sig], goal, ests, cfg, p) {
			v.Held, v.Effective = true, v.NonReclaimable
			o.Available = v.NonReclaimable
			snap.Observations[sig] = o
		}
		if grows[sig].dying() != "" {
			st.flightKills(now, *v, in.Pods, cfg, p)
		}
	}
	return snap
}

// rungStep decides one signal whose working set alone is under its threshold, with the rung on: true
// holds the eviction off (a reclaim planned now or settling). g is the signal's growth at this step.
func (st *State) rungStep(now time.Time, v *ReclaimView, g growth, goal int64, ests []podReclaim, cfg Config, p *Plan) bool {
	sig, ac := v.Signal, cfg.Reclaim.Action
	say := func(s string) { p.tr().add(KindReclaimAction, string(sig), s) }
	r, had := st.rungs[sig]
	if v.WorkingSet < v.Kubelet {
		below := fmt.Sprintf("the working set %s is below the kubelet's own threshold %s", threshold.FormatAvailable(v.WorkingSet, sig),
			threshold.FormatAvailable(v.Kubelet, sig))
		if dying := g.dying(); dying != "" {
			// The kubelet may act on it; another eviction of ours would not stop the fall, and once the pods
			// in flight are dead the working set is back where it was (seen on the real node: the agent
			// evicted the reader beside a dying hog).
			v.Steady = dying
			say(below + ", but " + dying + ": not evicting more")
			return true
		}
		say(below + ": too late to reclaim, evicting")
		return false
	}
	grows := g.crossing(*v, cfg.Reclaim.KubeletHorizon)
	switch {
	case had && r.err != "":
		r.spent = true
		st.rungs[sig] = r
		return st.withoutRung(v, g, cfg, say, "the reclaim at "+stamp(r.at)+" failed ("+r.err+")")
	case had && r.spent:
		return st.withoutRung(v, g, cfg, say, "the reclaim at "+stamp(r.at)+" did not bring the signal back")
	case had && now.Before(r.at.Add(ac.Settle)):
		if grows != "" {
			say(fmt.Sprintf("the reclaim at %s settles until %s, but %s: evicting", stamp(r.at), stamp(r.at.Add(ac.Settle)), grows))
			return false
		}
		say(fmt.Sprintf("the reclaim at %s settles until %s (freed %s of %s so far): not evicting", stamp(r.at),
			stamp(r.at.Add(ac.Settle)), threshold.FormatQuantity(r.freed, true), threshold.FormatQuantity(r.requested, true)))
		return true
	case had:
		r.spent = true
		st.rungs[sig] = r
		return st.withoutRung(v, g, cfg, say, fmt.Sprintf("still under the threshold after the reclaim at %s settled (%s; freed %s of %s)",
			stamp(r.at), ac.Settle, threshold.FormatQuantity(r.freed, true), threshold.FormatQuantity(r.requested, true)))
	}
	if last, ok := st.lastReclaim[sig]; ok && now.Sub(last) < ac.MinInterval {
		return st.withoutRung(v, g, cfg, say, fmt.Sprintf("last reclaim at %s, less than %s ago (reclaim.action.minInterval)", stamp(last), ac.MinInterval))
	}
	reqs, enough, skipped := reclaimTargets(*v, goal, ests, cfg)
	for _, s := range skipped {
		say(s)
	}
	if !enough {
		say("not enough reclaimable file pages outside thrashing pods to bring the working set back to " +
			threshold.FormatAvailable(goal, sig) + ": evicting")
		return false
	}
	r = rung{at: now, uids: map[string]bool{}}
	for _, q := range reqs {
		r.uids[q.Pod.UID] = true
		r.requested += q.Bytes
		p.Reclaims = mergeReclaim(p.Reclaims, q)
	}
	if st.rungs == nil {
		st.rungs = map[signal.Signal]rung{}
	}
	if st.lastReclaim == nil {
		st.lastReclaim, st.reclaimFrom = map[signal.Signal]time.Time{}, map[signal.Signal]int64{}
	}
	st.rungs[sig], st.lastReclaim[sig], st.reclaimFrom[sig] = r, now, v.WorkingSet
	// Growth that takes even the reclaimed working set (at goal) to the kubelet's threshold within the
	// horizon is evicted for at once; the reclaim keeps the kubelet's working set up meanwhile. Slower
	// growth is the reclaim's to absorb.
	after := *v
	after.WorkingSet = goal
	if grows := g.crossing(after, cfg.Reclaim.KubeletHorizon); grows != "" {
		say("would reclaim " + describeReclaims(reqs) + " and evict: from " + threshold.FormatAvailable(goal, sig) +
			", where the reclaim takes it, " + grows)
		return false
	}
	say("would reclaim " + describeReclaims(reqs) + " instead of evicting: the working set " +
		threshold.FormatAvailable(v.WorkingSet, sig) + " is under the threshold only through reclaimable cache (estimate " +
		threshold.FormatAvailable(v.NonReclaimable, sig) + "); eviction waits " + ac.Settle.String())
	return true
}

// withoutRung decides a signal the rung has had its chance with (why: its reclaim failed, did not bring
// the signal back, or ran less than MinInterval ago) as the backstop without the rung does: it evicts
// only when the kubelet would act, the working set falling toward the kubelet's own threshold within
// ReclaimConfig.KubeletHorizon (wstrend.go); a working set steady above it is left alone (true: held,
// acting on the estimate), like a pod that reads its file in a loop and reads back every page reclaimed
// from it (seen on the real node: the chart's agent evicted such a reader 6 s after its start, where the
// kubelet alone kept it for ten minutes). With KubeletHorizon 0 the fixed KubeletMargin alone decides:
// evicting.
//
// The fall right after a reclaim is mostly the reclaimed pages read back, and that cannot take the working
// set below where it was when the reclaim was planned (above the kubelet's threshold, or the rung would not
// have reclaimed). So while the working set is less than halfway from there down to the kubelet's
// threshold, it is held without the trend; further down the trend decides.
func (st *State) withoutRung(v *ReclaimView, g growth, cfg Config, say func(string), why string) bool {
	h := cfg.Reclaim.KubeletHorizon
	if h <= 0 {
		say(why + ": evicting")
		return false
	}
	if grows := g.crossing(*v, h); grows != "" {
		say(why + "; " + grows + ": evicting")
		return false
	}
	if dying := g.dying(); dying != "" {
		v.Steady = dying
		say(why + "; " + dying + ": not evicting (the backstop without the rung)")
		return true
	}
	if from, ok := st.reclaimFrom[v.Signal]; ok && from > v.Kubelet && v.WorkingSet >= (from+v.Kubelet)/2 {
		v.Steady = fmt.Sprintf("the working set %s is not below %s, halfway from %s, where it was when the reclaim was planned, "+
			"to the kubelet's threshold %s: the reclaimed pages read back, not a fall the kubelet would act on",
			threshold.FormatAvailable(v.WorkingSet, v.Signal), threshold.FormatAvailable((from+v.Kubelet)/2, v.Signal),
			threshold.FormatAvailable(from, v.Signal), threshold.FormatAvailable(v.Kubelet, v.Signal))
		say(why + "; " + v.Steady + ": not evicting (the backstop without the rung)")
		return true
	}
	if steady := st.wsLast[v.Signal].steady(signal.Observation{Available: v.WorkingSet}, v.Kubelet, h); steady != "" {
		v.Steady = steady
		say(why + "; " + steady + ": not evicting (the backstop without the rung)")
		return true
	}
	say(why + ": evicting")
	return false
}

// hardOf returns the highest resolved hard threshold of sig (the one the backstop crosses first).
func hardOf(cfg threshold.Config, sig signal.Signal, o signal.Observation) (decision.ThresholdID, bool) {
	best, found := decision.ThresholdID(0), false
	var bestV int64
	for i, t := range cfg.Thresholds {
		if t.Signal != sig || !t.IsHard() || t.Inert() {
			continue
		}
		if v := t.Value.Resolve(o.Capacity); !found || v > bestV {
			best, bestV, found = decision.ThresholdID(i), v, true
		}
	}
	return best, found
}
