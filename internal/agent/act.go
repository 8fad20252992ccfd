package agent

import (
	"context"
	"time"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// pdbRetry is how long a pod whose eviction a PodDisruptionBudget refused is left alone before the next
// request (the disruption controller needs a resync to allow another disruption).
const pdbRetry = 10 * time.Second

// action is what happened to one victim.
type action struct {
	Pod     string // namespace/name
	UID     string
	Result  actuate.Result
	Skipped string // why no request was made (API backoff), else ""
	Killed  bool   // the trend rung SIGKILLed the pod's processes
}

// act carries out the victims' evictions in rank order.
func (a *Agent) act(ctx context.Context, now time.Time, cfg threshold.Config, snap signal.Snapshot,
	victims []victim, active map[string]activePod) []action {
	var out []action
	for _, v := range victims {
		ap, ok := active[v.Eviction.UID]
		if !ok {
			continue
		}
		req := a.request(cfg, snap, v, ap)
		act := action{Pod: podKey(v.Eviction.Namespace, v.Eviction.Name), UID: v.Eviction.UID}
		if r, ok := a.st.refused[v.Eviction.UID]; ok && now.Sub(r.at) < pdbRetry && (r.hard || !req.Hard) {
			act.Skipped = "pdb refusal retry" // a hard threshold does not wait for a soft refusal's pause
			out = append(out, act)
			continue
		}
		if !a.Settings.DryRun && a.st.api.blocked(a.Clock.Now()) {
			act.Skipped = "api backoff"
			act.Killed = a.trendKill(now, cfg, snap, v, req, actuate.Result{})
			a.Log.Debug("evict skipped: api backoff", "pod", act.Pod, "killed", act.Killed)
			out = append(out, act)
			continue
		}
		act.Result = a.evict(ctx, req)
		act.Killed = a.trendKill(now, cfg, snap, v, req, act.Result)
		a.logAction(req, act)
		out = append(out, act)
	}
	return out
}

// evict runs the ladder for one request and does the bookkeeping.
func (a *Agent) evict(ctx context.Context, req actuate.Request) actuate.Result {
	res, err := a.Ladder.Evict(ctx, req)
	if err != nil {
		a.Metrics.errors.WithLabelValues(stageLedger).Inc()
		a.Log.Warn("eviction ledger", "pod", podKey(req.Pod.Namespace, req.Pod.Name), "err", err)
	}
	now := a.Clock.Now()
	switch {
	case res.Outcome == actuate.OutcomeUnavailable:
		d := a.st.api.fail(now)
		a.Log.Warn("api unavailable, backing off", "pod", podKey(req.Pod.Namespace, req.Pod.Name), "backoff", d, "err", res.Err())
	case res.Outcome != actuate.OutcomeInFlight:
		a.st.api.succeed()
	}
	if res.Outcome.Done() || res.Outcome == actuate.OutcomeDryRun {
		a.st.requested[string(req.Pod.UID)] = now
	}
	if res.Outcome == actuate.OutcomeBlockedByPDB {
		a.st.refused[string(req.Pod.UID)] = refusal{at: now, hard: req.Hard}
	}
	if res.Outcome != actuate.OutcomeInFlight {
		a.st.limiter.take(now)
		a.reportDetection(req.Signal, now)
		a.Metrics.evictions.WithLabelValues(req.Signal, pathOf(res), string(res.Outcome)).Inc()
	}
	if res.Outcome == actuate.OutcomeFailed {
		a.Metrics.errors.WithLabelValues(stageEvict).Inc()
	}
	if l := res.Loop; l != nil {
		a.Metrics.loops.Inc()
		a.Log.Warn("eviction loop", "owner", l.Owner.String(), "pod", podKey(req.Pod.Namespace, req.Pod.Name),
			"evictions", l.Evictions, "since", l.Since, "avoid_until", l.Until)
	}
	return res
}

func pathOf(res actuate.Result) string {
	switch {
	case res.Outcome == actuate.OutcomeDryRun:
		return "dry-run"
	case res.Rung == actuate.RungNone:
		return "none"
	}
	return string(res.Rung)
}

// request maps a decided eviction into an actuate.Request.
func (a *Agent) request(cfg threshold.Config, snap signal.Snapshot, v victim, ap activePod) actuate.Request {
	ev := v.Eviction
	t := cfg.Thresholds[ev.Threshold]
	observed, thr := describeThreshold(cfg, ev.Threshold, snap.Observations)
	return actuate.Request{
		Pod:                actuate.PodRef{Namespace: ev.Namespace, Name: ev.Name, UID: ap.Pod.UID, QOSClass: string(ap.Pod.Status.QOSClass)},
		Owner:              actuate.ControllerOf(ap.Pod),
		Created:            ap.Pod.CreationTimestamp.Time,
		GracePeriodSeconds: ev.Grace.Effective,
		Hard:               t.IsHard(),
		Terminating:        ap.Pod.DeletionTimestamp != nil,
		Signal:             string(ev.Signal),
		Observed:           observed,
		Threshold:          thr,
		Rank:               v.Rank,
		DecidedBy:          string(ev.DecidedBy),
		Message:            ev.Message,
		Annotations:        ev.Annotations,
	}
}

// trendKill is the last rung on the usage trend: for a hard memory threshold, when the signal falls fast
// enough to reach zero available within KillLead (an OOM kill is closer than the eviction can complete),
// SIGKILL the victim's processes right after the eviction request, so the kernel does not pick a victim
// at random. It runs once per pod; never in dry-run or when the ladder already killed.
func (a *Agent) trendKill(now time.Time, cfg threshold.Config, snap signal.Snapshot, v victim,
	req actuate.Request, res actuate.Result) bool {
	if a.Killer == nil || a.Settings.KillLead <= 0 || a.Settings.DryRun || !req.Hard || res.Rung == actuate.RungCgroupKill {
		return false
	}
	if res.Outcome == actuate.OutcomeGone || res.Outcome == actuate.OutcomeInFlight {
		return false
	}
	sig := v.Eviction.Signal
	eta, ok := timeToExhaustion(a.st.lastObs[sig], snap.Observations[sig])
	if !sig.IsMemory() || !ok || eta > a.Settings.KillLead {
		return false
	}
	n, err := a.Killer.KillPod(req.Pod)
	if err != nil {
		a.Metrics.errors.WithLabelValues(stageKill).Inc()
		a.Log.Warn("cgroup kill", "pod", podKey(req.Pod.Namespace, req.Pod.Name), "err", err)
		return false
	}
	a.st.requested[string(req.Pod.UID)] = a.Clock.Now()
	a.Metrics.evictions.WithLabelValues(req.Signal, string(actuate.RungCgroupKill), string(actuate.OutcomeKilled)).Inc()
	a.Log.Info("killed on the node: OOM closer than the eviction", "pod", podKey(req.Pod.Namespace, req.Pod.Name),
		"signal", sig, "eta", eta, "processes", n)
	return true
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

// logAction writes the one structured line per eviction that says why.
func (a *Agent) logAction(req actuate.Request, act action) {
	a.Log.Info("evict",
		"pod", act.Pod, "uid", act.UID, "signal", req.Signal, "observed", req.Observed, "threshold", req.Threshold,
		"hard", req.Hard, "rank", req.Rank, "decided_by", req.DecidedBy, "grace", req.GracePeriodSeconds,
		"policy", a.Settings.Policy, "dry_run", a.Settings.DryRun, "outcome", act.Result.Outcome,
		"rung", act.Result.Rung, "skipped", act.Skipped, "killed", act.Killed, "err", act.Result.Err())
}
