package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/owner"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

// action is what happened to one planned eviction.
type action struct {
	Pod    string // namespace/name
	UID    string
	Result actuate.Result
	Killed bool // the trend kill SIGKILLed the pod's processes
	// Requested is when the ladder was started (the eviction request's first call follows at once): the
	// evict line's requested_at, which benchmarks compare with a crossing sampled on the same clock.
	Requested time.Time
}

// act carries out the plan: the evictions in rank order, each followed by its kill when the plan has
// one, then the kills of pods whose eviction was deferred. Every action's outcome is kept for the next
// step. Whether the next eviction is attempted (policy.CarryOn) and whether a kill follows its eviction
// (policy.KillAfter) are the policy's rules.
func (a *Agent) act(ctx context.Context, plan policy.Plan, pods map[string]*corev1.Pod) []action {
	kills := map[string]policy.Kill{}
	for _, k := range plan.Kills {
		kills[k.Pod.UID] = k
	}
	var out []action
	down := false
	for _, ev := range plan.Evictions {
		if a.st.unlisted[ev.UID] {
			delete(kills, ev.UID) // the kill is the eviction
			out = append(out, a.killUnlisted(ev))
			continue
		}
		p, ok := pods[ev.UID]
		if _, busy := a.fallbacks.Load(ev.UID); !ok || down || busy || ctx.Err() != nil {
			a.outcome(ev.UID, policy.ActionEvict, policy.ResultNotAttempted, policy.ContactNone)
			continue
		}
		req := request(ev, p)
		act := action{Pod: podKey(ev.Namespace, ev.Name), UID: ev.UID, Requested: a.Clock.Now()}
		act.Result = a.evict(ctx, plan, ev, req)
		down = !policy.CarryOn(contact(act.Result))
		if k, ok := kills[ev.UID]; ok {
			delete(kills, ev.UID)
			act.Killed = a.kill(k, req, act.Result)
		}
		a.logAction(plan, req, act)
		out = append(out, act)
	}
	for _, k := range plan.Kills {
		if _, ok := kills[k.Pod.UID]; !ok {
			continue
		}
		if p, ok := pods[k.Pod.UID]; ok {
			a.kill(k, request(policy.Eviction{}, p), actuate.Result{})
		}
	}
	return out
}

// evict runs the ladder for one request and does the bookkeeping. A ladder that has to wait for the
// PDB fallback goes on in the background (actuate.Ladder.EvictThen): the pod stays in flight meanwhile
// (the fallback ends with its DELETE), the plan's next victims are asked at once and the next syncs
// decide as usual; the final result is the outcome of a later sync.
func (a *Agent) evict(ctx context.Context, plan policy.Plan, ev policy.Eviction, req actuate.Request) actuate.Result {
	if !ev.Crossing.IsZero() {
		a.Metrics.detection.Observe(a.Clock.Since(ev.Crossing).Seconds())
	}
	a.bg.Add(1)
	a.fallbacks.Store(ev.UID, true) // no second ladder for the pod while its fallback runs
	res, err := a.Ladder.EvictThen(ctx, req, func(final actuate.Result, err error) {
		defer a.bg.Done()
		defer a.fallbacks.Delete(ev.UID)
		a.evicted(ev.UID, req, final, err, a.later.add)
		a.Log.Info("eviction fallback", "pod", podKey(req.Pod.Namespace, req.Pod.Name), "outcome", final.Outcome,
			"rung", final.Rung, "why", strings.Join(final.Why, "; "))
	})
	if res.Continuing {
		// No outcome yet: the pod stays in flight, counted as leaving (the fallback DELETEs it after the
		// wait); the final result lands it, or gives it back, in a later sync.
		return res
	}
	a.fallbacks.Delete(ev.UID)
	a.bg.Done()
	a.evicted(ev.UID, req, res, err, func(o policy.Outcome) { a.st.outcomes = append(a.st.outcomes, o) })
	return res
}

// evicted does the bookkeeping of a ladder's final result: its outcome (given to keep), the ledger
// error, the metrics and the loop.
func (a *Agent) evicted(uid string, req actuate.Request, res actuate.Result, err error, keep func(policy.Outcome)) {
	if err != nil {
		a.Metrics.errors.WithLabelValues(stageLedger).Inc()
		a.Log.Warn("eviction ledger", "pod", podKey(req.Pod.Namespace, req.Pod.Name), "err", err)
	}
	keep(policy.Outcome{UID: uid, Action: policy.ActionEvict, Result: policy.Result(res.Outcome), API: contact(res), At: a.Clock.Now()})
	if contact(res) == policy.ContactUnavailable {
		a.Log.Warn("api unavailable, backing off", "pod", podKey(req.Pod.Namespace, req.Pod.Name), "err", firstErr(res))
	}
	a.Metrics.evictions.WithLabelValues(req.Signal, pathOf(res), string(res.Outcome)).Inc()
	if res.Outcome == actuate.OutcomeFailed {
		a.Metrics.errors.WithLabelValues(stageEvict).Inc()
	}
	if l := res.EvictionLoop; l != nil {
		a.Metrics.loops.Inc()
		a.Log.Warn("eviction loop", "owner", l.Owner.String(), "pod", podKey(req.Pod.Namespace, req.Pod.Name),
			"evictions", l.Evictions, "since", l.Since, "avoid_until", l.Until)
	}
}

// contact is what the ladder's attempts learned about the API server, by the policy's rule
// (policy.Contacted).
func contact(res actuate.Result) policy.Contact {
	attempts := make([]policy.Attempt, 0, len(res.Attempts))
	for _, at := range res.Attempts {
		attempts = append(attempts, policy.Attempt{Rung: at.Rung, Result: policy.Result(at.Outcome)})
	}
	return policy.Contacted(attempts)
}

func firstErr(res actuate.Result) error {
	for _, at := range res.Attempts {
		if at.Err != nil {
			return at.Err
		}
	}
	return nil
}

// kill carries out a planned trend kill, unless the policy says the eviction already ended the pod
// (policy.KillAfter) or there is no killer.
func (a *Agent) kill(k policy.Kill, req actuate.Request, res actuate.Result) bool {
	if a.Killer == nil || !policy.KillAfter(res.Rung, policy.Result(res.Outcome)) {
		a.outcome(k.Pod.UID, policy.ActionKill, policy.ResultNotAttempted, policy.ContactNone)
		return false
	}
	n, err := a.Killer.KillPod(req.Pod.UID)
	if err != nil {
		a.Metrics.errors.WithLabelValues(stageKill).Inc()
		a.Log.Warn("cgroup kill", "pod", k.Pod.String(), "err", err)
		a.outcome(k.Pod.UID, policy.ActionKill, policy.ResultFailed, policy.ContactNone)
		return false
	}
	a.outcome(k.Pod.UID, policy.ActionKill, policy.ResultKilled, policy.ContactNone)
	a.Metrics.evictions.WithLabelValues(string(k.Signal), string(actuate.RungCgroupKill), string(actuate.OutcomeKilled)).Inc()
	a.Log.Info("killed on the node: OOM closer than the eviction", "pod", k.Pod.String(), "signal", k.Signal, "eta", k.ETA,
		"processes", n)
	return true
}

// outcome keeps what happened to one action for the next step.
func (a *Agent) outcome(uid string, act policy.Action, r policy.Result, c policy.Contact) {
	a.st.outcomes = append(a.st.outcomes, policy.Outcome{UID: uid, Action: act, Result: r, API: c, At: a.Clock.Now()})
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

// request maps a planned eviction into an actuate.Request.
func request(ev policy.Eviction, p *corev1.Pod) actuate.Request {
	return actuate.Request{
		Pod:                actuate.PodRef{Namespace: p.Namespace, Name: p.Name, UID: p.UID},
		Owner:              owner.ControllerOf(p),
		Created:            p.CreationTimestamp.Time,
		GracePeriodSeconds: ev.Grace.Effective,
		Hard:               ev.Hard,
		Signal:             string(ev.Signal),
		Observed:           ev.ObservedText,
		Threshold:          ev.ThresholdText,
		Rank:               ev.Rank,
		DecidedBy:          string(ev.DecidedBy),
		Message:            ev.Message,
		Annotations:        ev.Annotations,
	}
}

// logAction writes the one structured line per eviction that says why.
func (a *Agent) logAction(plan policy.Plan, req actuate.Request, act action) {
	a.Log.Info("evict",
		"pod", act.Pod, "uid", act.UID, "signal", req.Signal, "observed", req.Observed, "threshold", req.Threshold,
		"hard", req.Hard, "rank", req.Rank, "decided_by", req.DecidedBy, "grace", req.GracePeriodSeconds,
		"policy", plan.Policy, "dry_run", a.Settings.DryRun, "outcome", act.Result.Outcome,
		"rung", act.Result.Rung, "killed", act.Killed, "err", act.Result.Err(), "reclaim", reclaimLog(plan, req.Signal),
		"lead", plan.LeadWhy(signal.Signal(req.Signal)), "decision", decisionLog(plan), "sync_started_at", a.st.times.started,
		"read_done_at", a.st.times.read, "decided_at", a.st.times.decided, "sync_cpu", a.st.times.cpuText(),
		"requested_at", act.Requested)
}

// reclaimLog is, for policy reclaim-aware, how the acted-on memory signal was seen ("" otherwise): what
// the policy acted on and why (confirmed pressure, the kubelet's backstop, or the estimate alone), the
// working set, the non-reclaimable estimate and the stall signals.
func reclaimLog(plan policy.Plan, sig string) string {
	for _, v := range plan.Reclaim {
		if string(v.Signal) != sig {
			continue
		}
		on := "estimate"
		switch {
		case !v.Known:
			on = "working set (estimate unknown: " + v.Why + ")"
		case v.Confirmed:
			on = "lower (confirmed)"
		case v.Backstop:
			on = "lower (kubelet backstop)"
		}
		return fmt.Sprintf("acted on %s: confirmed=%t backstop=%t working-set=%dMi estimate=%dMi effective=%dMi "+
			"psi-some=%.2f psi-full=%.2f refaults=%s activations=%s", on, v.Confirmed, v.Backstop,
			v.WorkingSet>>20, v.NonReclaimable>>20, v.Effective>>20, v.SomeAvg10, v.FullAvg10,
			rateLog(v.RefaultKnown, v.RefaultRate), rateLog(v.ActivateKnown, v.ActivateRate))
	}
	return ""
}

// decisionLog is the step's trace of the reclaim rung, the target, the walk and the kills, one "kind
// subject: detail" per entry joined by " | ": which rule acted and why these pods (the rest of the trace
// is in explain).
func decisionLog(plan policy.Plan) string {
	var parts []string
	for _, e := range plan.Trace {
		switch e.Kind {
		case policy.KindReclaimAction, policy.KindTarget, policy.KindWalk, policy.KindKill:
			parts = append(parts, string(e.Kind)+" "+e.Subject+": "+e.Detail)
		}
	}
	return strings.Join(parts, " | ")
}

func rateLog(known bool, r float64) string {
	if !known {
		return "unknown"
	}
	return fmt.Sprintf("%dMi/s", int64(r)>>20)
}
