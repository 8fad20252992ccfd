package policy

import (
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// victim is one pod a step chose to evict.
type victim struct {
	ev      decision.Eviction
	cand    rank.Candidate
	rank    int
	release Release
	why     string
}

// target returns how much the acted-on signal of threshold id must gain: threshold + minimum reclaim,
// minus the credited available amount. Met only through the minimum reclaim of a previously acted-on
// threshold, the need is 1: one pod, as the kubelet.
func target(cfg threshold.Config, id decision.ThresholdID, obs map[signal.Signal]signal.Observation, maxPods int) Target {
	t := cfg.Thresholds[id]
	o := obs[t.Signal]
	goal := threshold.MetQuantity(t, o.Capacity, true)
	tg := Target{Signal: t.Signal, Threshold: id, Available: o.Available, Goal: goal.Value(), Max: maxPods}
	tg.Need = max(1, tg.Goal-tg.Available)
	return tg
}

// release returns what evicting c frees of sig, and why it frees nothing (or is not taken) when it does
// not. A pod without stats has no cgroup (Pending, ContainerCreating): it frees nothing. Memory frees the
// working set, pid.available the threads; a disk signal what the pod's measured usage of it says
// (rank.DiskUsage under layout). Absent is not zero: a pod none of whose disk usage is measured frees an
// unknown amount and is not evicted blindly for a disk signal.
func release(sig signal.Signal, layout signal.FilesystemLayout, c rank.Candidate) (Release, string) {
	s := c.Stats
	if s == nil {
		return Release{Known: true}, "no stats (no cgroup): frees nothing"
	}
	var r Release
	switch {
	case sig.IsMemory():
		if s.MemoryWorkingSet != nil {
			r = Release{Amount: int64(*s.MemoryWorkingSet), Known: true}
		}
	case sig == signal.PIDAvailable:
		if s.ThreadCount != nil {
			r = Release{Amount: int64(*s.ThreadCount), Known: true}
		}
	default:
		u, ok := rank.DiskUsage(sig, layout, c)
		if !ok {
			return Release{}, "its ephemeral-storage usage is not measured: not evicted blindly"
		}
		r = Release{Amount: u, Known: true}
	}
	if r.Known && r.Amount <= 0 {
		return r, "its usage is 0: frees nothing"
	}
	return r, ""
}

// formatRelease prints an amount of sig for people (threshold.FormatHuman: "1.3Gi", "4.2M"), never raw bytes.
func formatRelease(sig signal.Signal, r Release) string {
	if !r.Known {
		return "an unknown amount"
	}
	return threshold.FormatHuman(r.Amount, sig.Bytes())
}

// walkToTarget walks the predicted order (the full ranking the kubelet's walk would use) and takes pods
// until their expected release covers t.Need or t.Max pods are taken. It skips critical pods, pods that
// free nothing and pods whose eviction a PodDisruptionBudget refused within PDBRetry (unless that was
// for a soft threshold and this one is hard). A pod whose release is unknown is taken, and the walk
// stops after it rather than evict more pods blindly; for a disk signal a pod whose usage is not measured
// is skipped (release).
//
// ws, when not nil, gives each pod's memory release by UID (policy ReclaimAware acting on the working set);
// grow each pod's growth of usage other than page cache, bytes/s, by UID: with t.Growth set the walk also
// stops once the pods taken grow that fast, and with t.GrowersOnly it takes only the growing pods.
func (st *State) walkToTarget(pr decision.Prediction, t Target, layout signal.FilesystemLayout, hard bool, ws map[string]int64,
	grow map[string]float64, cfg Config, p *Plan) []victim {
	var out []victim
	var got int64
	var grown float64
	done := ""
	for i, pred := range pr.Order {
		e := pr.Ranking.Entries[i]
		c := e.Candidate
		rel, frees := release(t.Signal, layout, c)
		if w, ok := ws[c.UID]; ok && frees == "" && t.Signal.IsMemory() {
			rel = Release{Amount: w, Known: true}
		}
		row := Considered{Pod: PodRef{UID: c.UID, Namespace: c.Namespace, Name: c.Name}, Rank: i + 1, Release: rel}
		switch r, refused := st.refused[c.UID]; {
		case pred.Critical:
			row.Skip = "critical (" + pred.CriticalReason + "): never evicted"
		case done != "":
			row.Skip = done
		case t.GrowersOnly && grow[c.UID] < float64(t.Growth)/4:
			row.Skip = "does not grow: evicting it would not stop the fall, which the growing pods make"
		case refused && (r.hard || !hard):
			row.Skip = fmt.Sprintf("refused by a PodDisruptionBudget at %s: asked again from %s", stamp(r.at), stamp(r.at.Add(cfg.PDBRetry)))
		case frees != "":
			row.Skip = frees
		default:
			row.Taken = true
			got += rel.Amount
			grown += grow[c.UID]
			why := fmt.Sprintf("rank %d, frees %s (taken so far: %s of the %s needed)", i+1, formatRelease(t.Signal, rel),
				formatRelease(t.Signal, Release{Amount: got, Known: rel.Known}), formatRelease(t.Signal, Release{Amount: t.Need, Known: true}))
			if t.Growth > 0 {
				why += fmt.Sprintf(", grows %s/s (taken so far: %s/s of the %s/s that end the walk)", threshold.FormatHuman(int64(grow[c.UID]), true),
					threshold.FormatHuman(int64(grown), true), threshold.FormatHuman(t.Growth, true))
			}
			out = append(out, victim{ev: pred.Eviction, cand: c, rank: i + 1, release: rel, why: why})
			switch {
			case !rel.Known:
				done = "not reached: " + row.Pod.String() + " frees an unknown amount"
			case got >= t.Need:
				done = "not needed: the pods before cover the need"
			case t.Growth > 0 && grown >= float64(t.Growth):
				done = "not needed: the pods before grow as fast as the growth that makes the fall, and their eviction stops it"
			case len(out) >= t.Max:
				done = fmt.Sprintf("not reached: at most %d pods per step", t.Max)
			}
		}
		p.Walk = append(p.Walk, row)
		detail := "take"
		if !row.Taken {
			detail = "skip: " + row.Skip
		}
		p.tr().add(KindWalk, row.Pod.String(), fmt.Sprintf("%d. frees %s; %s", row.Rank, formatRelease(t.Signal, rel), detail))
	}
	return out
}

// kubeletVictim is the kubelet's one pod per step: the first non-critical pod of the ranking, unless
// its eviction is already under way (the kubelet waits for it) or was refused within PDBRetry.
func (st *State) kubeletVictim(ev decision.Eviction, r *rank.Ranking, layout signal.FilesystemLayout, pods map[string]Pod,
	hard bool, cfg Config, p *Plan) []victim {
	v := victim{ev: ev}
	if r != nil {
		for i, e := range r.Entries {
			if e.Candidate.UID == ev.UID {
				v.cand, v.rank = e.Candidate, i+1
				v.release, _ = release(ev.Signal, layout, e.Candidate)
			}
		}
	}
	ref := PodRef{UID: ev.UID, Namespace: ev.Namespace, Name: ev.Name}
	if pod, ok := pods[ev.UID]; ok && st.inFlight(pod) {
		p.Deferred = append(p.Deferred, Deferral{Pod: ref, Reason: "in flight: its eviction is under way (the kubelet waits for it)"})
		p.tr().add(KindLimit, ref.String(), "in flight: not requested again")
		return nil
	}
	if r, ok := st.refused[ev.UID]; ok && (r.hard || !hard) {
		until := r.at.Add(cfg.PDBRetry)
		p.Deferred = append(p.Deferred, Deferral{Pod: ref, Reason: "refused by a PodDisruptionBudget", Until: until})
		p.tr().add(KindLimit, ref.String(), "refused by a PodDisruptionBudget: asked again from "+stamp(until))
		return nil
	}
	v.why = fmt.Sprintf("the kubelet's victim: rank %d, one pod per step", v.rank)
	return []victim{v}
}

// trendKill reports whether victim v is also to be SIGKILLed on the node: a hard memory threshold, and
// the fall of the signal from the last observation to this one reaches zero available within KillLead
// (the OOM kill is closer than the eviction can complete, so the kernel must not pick a victim at
// random), or kubeletKill says so. Never in dry-run.
func (st *State) trendKill(v victim, hard bool, obs map[signal.Signal]signal.Observation, cfg Config, p *Plan) (Kill, bool) {
	sig := v.ev.Signal
	if cfg.KillLead <= 0 || cfg.DryRun || !hard || !sig.IsMemory() {
		return Kill{}, false
	}
	prev, cur := st.last[sig], obs[sig]
	if cfg.Policy == ReclaimAware {
		// The observation acted on switches between the working set and the non-reclaimable estimate as
		// the rung holds and lets go: a "fall" from one to the other is no trend. The raw working set's
		// last two steps are.
		prev, cur = st.wsLast[sig].lastTwo()
	}
	eta, ok := timeToExhaustion(prev, cur)
	if !ok || eta > cfg.KillLead {
		return st.kubeletKill(v, p, cfg)
	}
	return st.exhaustionKill(v, sig, eta, cfg, p), true
}

// exhaustionKill is the trend kill of victim v: sig reaches zero in eta.
func (st *State) exhaustionKill(v victim, sig signal.Signal, eta time.Duration, cfg Config, p *Plan) Kill {
	k := Kill{Pod: PodRef{UID: v.ev.UID, Namespace: v.ev.Namespace, Name: v.ev.Name}, Signal: sig, ETA: eta}
	p.tr().add(KindKill, k.Pod.String(), fmt.Sprintf("%s reaches zero in %s, within the kill lead %s: SIGKILL on the node",
		sig, eta.Round(time.Millisecond), cfg.KillLead))
	return k
}

// kubeletKill reports whether victim v, a growing pod the backstop's walk took (Target.GrowersOnly), is
// also to be SIGKILLed on the node because the growth takes the working set to the kubelet's own
// threshold within KillLead: the kubelet would then evict by its own ranking (a page-cache pod before the
// hog, on the real node, where the hog's 256Mi/s left 0.13 s and the kubelet needs 0.4 to 1.3 s to stop
// an evicted pod). Not when the step also reclaims for sig: the reclaim holds the working set up (the
// rung cannot once its rate bound is used, which is when this kill is for).
func (st *State) kubeletKill(v victim, p *Plan, cfg Config) (Kill, bool) {
	sig := v.ev.Signal
	t := p.Target
	if t == nil || t.Signal != sig || !t.GrowersOnly || t.GrowthRate <= 0 {
		return Kill{}, false
	}
	vw, ok := viewOf(p.Reclaim, sig)
	if !ok || !vw.KubeletKnown {
		return Kill{}, false
	}
	for _, q := range p.Reclaims {
		if q.Signal == sig {
			return Kill{}, false // the reclaim planned with it holds the working set up
		}
	}
	// The growth's rate is over a second or more; the working set's fall since the last step is what the
	// kubelet sees coming now (a hog that starts slowly and then at full speed: on the real node the growth
	// read 4.8Mi/s where the working set then fell 256Mi/s).
	rate := max(float64(t.GrowthRate), st.wsFall(sig))
	eta := time.Duration(float64(max(0, vw.WorkingSet-vw.Kubelet)) / rate * float64(time.Second))
	if eta > cfg.KillLead {
		return Kill{}, false
	}
	k := Kill{Pod: PodRef{UID: v.ev.UID, Namespace: v.ev.Namespace, Name: v.ev.Name}, Signal: sig, ETA: eta}
	p.tr().add(KindKill, k.Pod.String(), fmt.Sprintf("the working set %s falls %s/s (growth %s/s): it reaches the kubelet's threshold %s "+
		"in %s, within the kill lead %s: SIGKILL on the node (the kubelet would evict by its own ranking before the eviction completes)",
		threshold.FormatAvailable(vw.WorkingSet, sig), threshold.FormatHuman(int64(rate), true), threshold.FormatHuman(t.GrowthRate, true),
		threshold.FormatAvailable(vw.Kubelet, sig), eta.Round(time.Millisecond), cfg.KillLead))
	return k, true
}

// timeToExhaustion extrapolates the fall of available from prev to cur to zero. It reports false when the
// signal is not falling or the two observations cannot give a trend.
func timeToExhaustion(prev, cur signal.Observation) (time.Duration, bool) {
	dt := cur.Time.Sub(prev.Time)
	if prev.Time.IsZero() || dt <= 0 || dt > time.Minute || cur.Available >= prev.Available {
		return 0, false
	}
	if cur.Available <= 0 {
		return 0, true
	}
	rate := float64(prev.Available-cur.Available) / dt.Seconds()
	return time.Duration(float64(cur.Available) / rate * float64(time.Second)), true
}
