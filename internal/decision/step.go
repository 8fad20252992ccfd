package decision

import (
	"fmt"
	"strings"

	"github.com/kube-pressure/pressure/internal/signal"
)

// Step runs one synchronize of the kubelet's eviction manager (spec §3.2) and returns the new state and
// the decision. It is pure: the same state and input always give the same result.
func Step(st State, in Input) (State, Decision) {
	var d Decision
	cfg := in.Config
	if len(cfg.Thresholds) == 0 && in.DisableLocalStorageCapacityIsolation {
		d.Trace.add(KindConfig, "", "no thresholds configured and local storage isolation disabled: nothing to do")
		return st, d
	}
	obs := in.Snapshot.Observations
	st.ThresholdsMet = knownIDs(st.ThresholdsMet, len(cfg.Thresholds))
	traceObservations(in, &d.Trace)

	met := metIDs(cfg, allIDs(cfg), obs, false, &d.Trace, "")
	if len(st.ThresholdsMet) > 0 {
		still := metIDs(cfg, st.ThresholdsMet, obs, true, &d.Trace, "previously acted on, ")
		met = merge(met, still)
	}
	d.Met = met

	first := firstObserved(met, st.FirstObservedAt, in.Now)
	observed := conditionsOf(cfg, met)
	for _, c := range observed {
		d.Trace.add(KindCondition, string(c), "observed now")
	}
	last := lastObserved(observed, st.ConditionsLastObservedAt, in.Now)
	d.Conditions = reported(last, cfg.PressureTransitionPeriod, in.Now, &d.Trace)
	passed := graceMet(cfg, first, in.Now, &d.Trace)

	next := State{
		FirstObservedAt:          first,
		ConditionsLastObservedAt: last,
		ThresholdsMet:            passed,
		Conditions:               d.Conditions,
		LastObservations:         copyObservations(obs),
	}
	toAct := freshStats(cfg, passed, obs, st.LastObservations, &d.Trace)

	if !in.DisableLocalStorageCapacityIsolation {
		if ev := localStorageEvictions(in.Candidates, in.Snapshot.Filesystems, in.Semantics, &d.Trace); len(ev) > 0 {
			d.Evictions = ev
			d.Trace.add(KindNothing, "", "local-storage evictions happened: no pressure eviction this step")
			return next, d
		}
	}
	if len(toAct) == 0 {
		d.Trace.add(KindNothing, "", "no threshold to act on")
		return next, d
	}
	actOn(&d, in, toAct)
	return next, d
}

// traceObservations records the observation of every configured signal, by signal name.
func traceObservations(in Input, tr *Trace) {
	seen := map[signal.Signal]bool{}
	var sigs []signal.Signal
	for _, t := range in.Config.Thresholds {
		if !t.Inert() && !seen[t.Signal] {
			seen[t.Signal] = true
			sigs = append(sigs, t.Signal)
		}
	}
	sortSignals(sigs)
	for _, s := range sigs {
		o, ok := in.Snapshot.Observations[s]
		if !ok {
			tr.add(KindObservation, string(s), "none (thresholds on it are never met)")
			continue
		}
		tr.add(KindObservation, string(s), fmt.Sprintf("available %d capacity %d at %s", o.Available, o.Capacity, stamp(o.Time)))
	}
}

func copyObservations(obs map[signal.Signal]signal.Observation) map[signal.Signal]signal.Observation {
	out := make(map[signal.Signal]signal.Observation, len(obs))
	for k, v := range obs {
		out[k] = v
	}
	return out
}

func joinIDs(ids []ThresholdID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprintf("#%d", int(id))
	}
	return strings.Join(parts, " ")
}

// knownIDs drops ids that do not exist in the configuration (a State carried over from another Config).
func knownIDs(ids []ThresholdID, n int) []ThresholdID {
	var out []ThresholdID
	for _, id := range ids {
		if id >= 0 && int(id) < n {
			out = append(out, id)
		}
	}
	return out
}
