package agent

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// firstCrossed returns, per observed signal, the highest resolved threshold (the one crossed first) and
// its index.
func firstCrossed(cfg threshold.Config, obs map[signal.Signal]signal.Observation) map[signal.Signal]decision.ThresholdID {
	out := map[signal.Signal]decision.ThresholdID{}
	for i, t := range cfg.Thresholds {
		o, ok := obs[t.Signal]
		if t.Inert() || !ok {
			continue
		}
		cur, seen := out[t.Signal]
		if !seen || t.Value.Resolve(o.Capacity) > cfg.Thresholds[cur].Value.Resolve(o.Capacity) {
			out[t.Signal] = decision.ThresholdID(i)
		}
	}
	return out
}

// observeSignals sets the signal gauges.
func (a *Agent) observeSignals(snap signal.Snapshot, cfg threshold.Config) {
	first := firstCrossed(cfg, snap.Observations)
	for sig, o := range snap.Observations {
		g, ok := a.Metrics.signalGauges(sig)
		if !ok {
			continue
		}
		g.available.WithLabelValues(string(sig)).Set(float64(o.Available))
		g.capacity.WithLabelValues(string(sig)).Set(float64(o.Capacity))
		if id, ok := first[sig]; ok {
			g.threshold.WithLabelValues(string(sig)).Set(float64(cfg.Thresholds[id].Value.Resolve(o.Capacity)))
		}
	}
}

// observeStatsAge exports the age of the observations a step acted on.
func (a *Agent) observeStatsAge(d decision.Decision) {
	for _, s := range d.StatsAge {
		a.Metrics.statsAge.WithLabelValues(string(s.Signal)).Set(s.Age.Seconds())
	}
}

// rawPressure returns the signals under pressure on the raw snapshot (no released usage counted): a
// threshold met, or, for a signal already under pressure, met with its minimum reclaim (hysteresis).
func (a *Agent) rawPressure(snap signal.Snapshot, cfg threshold.Config) map[signal.Signal]decision.ThresholdID {
	out := map[signal.Signal]decision.ThresholdID{}
	for i, t := range cfg.Thresholds {
		o, ok := snap.Observations[t.Signal]
		if !ok || t.Inert() {
			continue
		}
		if threshold.Met(t, o, a.st.rawMet[t.Signal]) {
			if _, seen := out[t.Signal]; !seen {
				out[t.Signal] = decision.ThresholdID(i)
			}
		}
	}
	return out
}

// trackPressure updates the pressure state, the episode crossings, the node events and the condition
// gauges, and reports whether the node is under pressure.
func (a *Agent) trackPressure(now time.Time, snap signal.Snapshot, cfg threshold.Config) bool {
	met := a.rawPressure(snap, cfg)
	first := firstCrossed(cfg, snap.Observations)
	for sig := range met {
		if !a.st.rawMet[sig] {
			t := cfg.Thresholds[first[sig]]
			o := snap.Observations[sig]
			a.st.crossing[sig] = crossingTime(a.st.lastObs[sig], o, t.Value.Resolve(o.Capacity))
		}
	}
	next := map[signal.Signal]bool{}
	conds := map[signal.NodeCondition]bool{}
	for sig := range met {
		next[sig] = true
		conds[sig.Condition()] = true
	}
	for sig := range a.st.rawMet {
		if !next[sig] {
			delete(a.st.crossing, sig)
		}
	}
	a.st.rawMet = next
	for _, c := range []signal.NodeCondition{signal.MemoryPressure, signal.DiskPressure, signal.PIDPressure} {
		a.Metrics.pressure.WithLabelValues(string(c)).Set(b2f(conds[c]))
	}
	a.pressureEvents(snap, cfg, met)
	return len(met) > 0
}

// pressureEvents emits the node events when pressure starts and ends.
func (a *Agent) pressureEvents(snap signal.Snapshot, cfg threshold.Config, met map[signal.Signal]decision.ThresholdID) {
	switch {
	case len(met) > 0 && a.st.pressure == nil:
		sig := firstSignal(met)
		observed, thr := describeThreshold(cfg, met[sig], snap.Observations)
		a.st.pressure = &episode{Signal: string(sig), Threshold: thr}
		a.Log.Warn("node pressure started", "signal", sig, "observed", observed, "threshold", thr)
		if a.Events != nil {
			a.Events.PressureStarted(string(sig), observed, thr)
		}
	case len(met) == 0 && a.st.pressure != nil:
		sig := signal.Signal(a.st.pressure.Signal)
		observed := threshold.FormatAvailable(snap.Observations[sig].Available, sig)
		a.Log.Info("node pressure ended", "signal", sig, "observed", observed)
		if a.Events != nil {
			a.Events.PressureEnded(string(sig), observed)
		}
		a.st.pressure = nil
	}
}

// firstSignal picks the signal to report: memory signals first, then by name.
func firstSignal(met map[signal.Signal]decision.ThresholdID) signal.Signal {
	var best signal.Signal
	for sig := range met {
		if best == "" || sigLess(sig, best) {
			best = sig
		}
	}
	return best
}

func sigLess(a, b signal.Signal) bool {
	if a.IsMemory() != b.IsMemory() {
		return a.IsMemory()
	}
	return a < b
}

// crossingTime estimates when available fell through thr between prev and cur by linear interpolation;
// without a usable previous observation it is cur's time.
func crossingTime(prev, cur signal.Observation, thr int64) time.Time {
	if prev.Time.IsZero() || !cur.Time.After(prev.Time) || prev.Available < thr || prev.Available <= cur.Available {
		return cur.Time
	}
	frac := float64(prev.Available-thr) / float64(prev.Available-cur.Available)
	return prev.Time.Add(time.Duration(frac * float64(cur.Time.Sub(prev.Time))))
}

// reportDetection observes the detection latency of the episode on sig once, at its first request.
func (a *Agent) reportDetection(sig string, now time.Time) {
	at, ok := a.st.crossing[signal.Signal(sig)]
	if !ok {
		return
	}
	a.Metrics.detection.Observe(now.Sub(at).Seconds())
	delete(a.st.crossing, signal.Signal(sig))
}

// breaker runs the loop breaker.
func (a *Agent) breaker(ctx context.Context, now time.Time, pressure bool, pods []*corev1.Pod) {
	if a.Breaker == nil || a.Settings.DryRun || a.st.api.blocked(now) {
		return
	}
	sig := ""
	if a.st.pressure != nil {
		sig = a.st.pressure.Signal
	}
	if err := a.Breaker.Sync(ctx, now, pressure, sig, pods); err != nil {
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
