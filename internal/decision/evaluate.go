package decision

import (
	"fmt"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// subject names a threshold in traces: "#<id> memory.available<100Mi".
func subject(cfg threshold.Config, id ThresholdID) string {
	return fmt.Sprintf("#%d %s", int(id), cfg.Thresholds[id].String())
}

// metIDs returns the ids whose threshold is met (threshold.Met: available < resolved threshold, plus
// min-reclaim when withMinReclaim, strictly). Thresholds without an observation, and inert ones, are never
// met. The trace records every evaluation with the compared values.
func metIDs(cfg threshold.Config, ids []ThresholdID, obs map[signal.Signal]signal.Observation,
	withMinReclaim bool, tr *Trace, label string) []ThresholdID {
	var out []ThresholdID
	for _, id := range ids {
		t := cfg.Thresholds[id]
		o, ok := obs[t.Signal]
		switch {
		case t.Inert():
			tr.add(KindThreshold, subject(cfg, id), label+"never met: inert (derived from a missing source threshold)")
			continue
		case !ok:
			tr.add(KindThreshold, subject(cfg, id), label+"not met: no observation for "+string(t.Signal))
			continue
		}
		q := threshold.MetQuantity(t, o.Capacity, withMinReclaim)
		met := threshold.Met(t, o, withMinReclaim)
		what := "threshold"
		if withMinReclaim && t.MinReclaim != nil {
			what = "threshold+minReclaim"
		}
		verdict, op := "not met", ">="
		if met {
			verdict, op = "met", "<"
			out = append(out, id)
		}
		tr.add(KindThreshold, subject(cfg, id), fmt.Sprintf("%s%s: available %d %s %s %s (capacity %d)",
			label, verdict, o.Available, op, what, q.String(), o.Capacity))
	}
	return out
}

// allIDs returns the ids of every configured threshold.
func allIDs(cfg threshold.Config) []ThresholdID {
	out := make([]ThresholdID, len(cfg.Thresholds))
	for i := range out {
		out[i] = ThresholdID(i)
	}
	return out
}

// merge returns a ∪ b, ascending.
func merge(a, b []ThresholdID) []ThresholdID {
	seen := map[ThresholdID]bool{}
	var out []ThresholdID
	for _, id := range append(append([]ThresholdID{}, a...), b...) {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// firstObserved keeps the previous first-observed time of each met threshold, else now. Thresholds not
// met are dropped, which resets their grace timer.
func firstObserved(met []ThresholdID, prev map[ThresholdID]time.Time, now time.Time) map[ThresholdID]time.Time {
	out := make(map[ThresholdID]time.Time, len(met))
	for _, id := range met {
		if at, ok := prev[id]; ok {
			out[id] = at
		} else {
			out[id] = now
		}
	}
	return out
}

// conditionsOf returns the unique node conditions of the met thresholds, by name.
func conditionsOf(cfg threshold.Config, met []ThresholdID) []signal.NodeCondition {
	seen := map[signal.NodeCondition]bool{}
	var out []signal.NodeCondition
	for _, id := range met {
		c := cfg.Thresholds[id].Signal.Condition()
		if c != "" && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	sortConditions(out)
	return out
}

func sortConditions(cs []signal.NodeCondition) {
	sort.Slice(cs, func(i, j int) bool { return cs[i] < cs[j] })
}

// lastObserved copies prev and stamps the observed conditions with now.
func lastObserved(observed []signal.NodeCondition, prev map[signal.NodeCondition]time.Time,
	now time.Time) map[signal.NodeCondition]time.Time {
	out := make(map[signal.NodeCondition]time.Time, len(prev)+len(observed))
	for c, at := range prev {
		out[c] = at
	}
	for _, c := range observed {
		out[c] = now
	}
	return out
}

// reported returns the conditions observed less than period ago (strict), by name, and traces each.
func reported(last map[signal.NodeCondition]time.Time, period time.Duration, now time.Time,
	tr *Trace) []signal.NodeCondition {
	var known []signal.NodeCondition
	for c := range last {
		known = append(known, c)
	}
	sortConditions(known)
	var out []signal.NodeCondition
	for _, c := range known {
		since := now.Sub(last[c])
		if since < period {
			out = append(out, c)
			tr.add(KindCondition, string(c), fmt.Sprintf("reported: last observed %s ago < transition period %s", since, period))
		} else {
			tr.add(KindCondition, string(c), fmt.Sprintf("not reported: last observed %s ago >= transition period %s", since, period))
		}
	}
	return out
}

// graceMet returns the thresholds whose grace period has passed (now - firstObserved >= grace), ascending.
func graceMet(cfg threshold.Config, first map[ThresholdID]time.Time, now time.Time, tr *Trace) []ThresholdID {
	ids := make([]ThresholdID, 0, len(first))
	for id := range first {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var out []ThresholdID
	for _, id := range ids {
		g := cfg.Thresholds[id].GracePeriod
		d := now.Sub(first[id])
		if d < g {
			tr.add(KindGrace, subject(cfg, id), fmt.Sprintf("waiting: met for %s < grace %s (%s left)", d, g, g-d))
			continue
		}
		tr.add(KindGrace, subject(cfg, id), fmt.Sprintf("passed: met for %s >= grace %s", d, g))
		out = append(out, id)
	}
	return out
}

// freshStats keeps the thresholds whose observation is newer than the last one: no previous observation,
// a zero observation time, or a time strictly after the previous.
func freshStats(cfg threshold.Config, ids []ThresholdID, obs, last map[signal.Signal]signal.Observation,
	tr *Trace) []ThresholdID {
	var out []ThresholdID
	for _, id := range ids {
		sig := cfg.Thresholds[id].Signal
		o, ok := obs[sig]
		if !ok {
			continue
		}
		l, had := last[sig]
		if !had || o.Time.IsZero() || o.Time.After(l.Time) {
			out = append(out, id)
			continue
		}
		tr.add(KindStale, subject(cfg, id), fmt.Sprintf("no eviction: observation time %s is not after the previous %s",
			stamp(o.Time), stamp(l.Time)))
	}
	return out
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }
