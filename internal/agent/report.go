package agent

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

// report sets the gauges, emits the node events and logs the plan's warnings.
func (a *Agent) report(now time.Time, plan policy.Plan, snap signal.Snapshot) {
	for _, w := range plan.Warnings {
		a.Metrics.errors.WithLabelValues(stageDecided).Inc()
		a.Log.Warn("policy", "warning", w)
	}
	if !plan.Observed {
		return
	}
	a.observeSignals(plan, snap)
	conds := map[signal.NodeCondition]bool{}
	for _, c := range plan.Conditions {
		conds[c] = true
	}
	for _, c := range []signal.NodeCondition{signal.MemoryPressure, signal.DiskPressure, signal.PIDPressure} {
		a.Metrics.pressure.WithLabelValues(string(c)).Set(b2f(conds[c]))
	}
	for _, s := range plan.Decision.StatsAge {
		a.Metrics.statsAge.WithLabelValues(string(s.Signal)).Set(s.Age.Seconds())
	}
	for _, e := range plan.NodeEvents {
		switch e.Kind {
		case policy.PressureStarted:
			a.Log.Warn("node pressure started", "signal", e.Signal, "observed", e.Observed, "threshold", e.Limit)
			if a.Events != nil {
				a.Events.PressureStarted(string(e.Signal), e.Observed, e.Limit)
			}
		case policy.PressureEnded:
			a.Log.Info("node pressure ended", "signal", e.Signal, "observed", e.Observed)
			if a.Events != nil {
				a.Events.PressureEnded(string(e.Signal), e.Observed)
			}
		}
	}
}

// observeSignals sets the signal gauges: available and capacity of every observed signal, and the
// threshold the policy watches it at.
func (a *Agent) observeSignals(plan policy.Plan, snap signal.Snapshot) {
	for sig, o := range snap.Observations {
		g, ok := a.Metrics.signalGauges(sig)
		if !ok {
			continue
		}
		g.available.WithLabelValues(string(sig)).Set(float64(o.Available))
		g.capacity.WithLabelValues(string(sig)).Set(float64(o.Capacity))
	}
	for _, w := range plan.Watch {
		if g, ok := a.Metrics.signalGauges(w.Signal); ok {
			g.threshold.WithLabelValues(string(w.Signal)).Set(float64(w.Value))
		}
	}
}

// breaker runs the loop breaker: the taint the plan wants, the ledger's settlements and the avoidances'
// expiry. Nothing is written in dry-run or while the policy holds writes (Plan.WritesHeld: the API
// backoff).
func (a *Agent) breaker(ctx context.Context, now time.Time, plan policy.Plan, pods []*corev1.Pod) {
	if a.Breaker == nil || a.Settings.DryRun || plan.WritesHeld(now) {
		return
	}
	if err := a.Breaker.Sync(ctx, now, plan.Taint, pods); err != nil {
		a.Metrics.errors.WithLabelValues(stageTaint).Inc()
		a.Log.Warn("loop breaker", "err", err)
	}
	a.Metrics.taint.Set(b2f(a.Breaker.Tainted()))
	a.Metrics.avoidances.Set(float64(a.Breaker.Avoiding(now)))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
