package policy

import (
	"fmt"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/decision"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// track updates the pressure episode on the raw snapshot (no credit counted): the signals under
// pressure (a threshold met, or for a signal already under pressure met with its minimum reclaim), the
// estimated crossing of each newly pressured signal, the node events when the episode starts and ends,
// and the last time under pressure (the taint's hysteresis).
func (st *State) track(now time.Time, snap signal.Snapshot, cfg threshold.Config, watch []Watch, p *Plan) {
	met := st.rawPressure(snap, cfg)
	first := map[signal.Signal]Watch{}
	for _, w := range watch {
		first[w.Signal] = w
	}
	next := map[signal.Signal]bool{}
	conds := map[signal.NodeCondition]bool{}
	for _, sig := range sortedSignals(met) {
		if !st.pressure[sig] {
			st.crossing[sig] = crossingTime(st.last[sig], snap.Observations[sig], first[sig].Value)
		}
		next[sig] = true
		conds[sig.Condition()] = true
		observed, limit := describe(cfg, met[sig], snap.Observations)
		p.Pressure = append(p.Pressure, SignalPressure{Signal: sig, Threshold: met[sig], Observed: observed, Limit: limit})
		p.tr().add(KindPressure, string(sig), fmt.Sprintf("under pressure: %s (available %s, threshold %s)",
			idString(cfg, met[sig]), observed, limit))
	}
	for sig := range st.pressure {
		if !next[sig] {
			delete(st.crossing, sig)
		}
	}
	st.pressure = next
	for _, c := range []signal.NodeCondition{signal.DiskPressure, signal.MemoryPressure, signal.PIDPressure} {
		if conds[c] {
			p.Conditions = append(p.Conditions, c)
		}
	}
	st.events(snap, cfg, met, p)
	if len(met) > 0 {
		st.lastPressure = now
		if st.episode != nil {
			st.taintValue = string(st.episode.signal)
		}
	}
}

// rawPressure returns the signals under pressure, each with the threshold that puts it there: the first
// (by ID) met plainly, else, for a signal already under pressure that the decision core still acts on
// (a threshold of it among the last step's ThresholdsMet), the first met with its minimum reclaim.
//
// The core decides on the credited snapshot (an in-flight pod's usage counted as free), so a credit can
// resolve the minimum-reclaim band there while the raw signal is still inside it; once the pod is gone
// the core, like the kubelet, does not enter the band again, and evicts nothing. Judged on the raw
// signal alone, the pressure (and the evicting taint, and the node events) would then outlast every
// eviction for as long as the signal sat in the band: 100 s in soak episode 50 of seed 20261205, which
// kept unrelated pods off the node (internal/policy/testdata/band-credit.txt).
func (st *State) rawPressure(snap signal.Snapshot, cfg threshold.Config) map[signal.Signal]decision.ThresholdID {
	acting := map[signal.Signal]bool{}
	for _, id := range st.decision.ThresholdsMet {
		if int(id) >= 0 && int(id) < len(cfg.Thresholds) {
			acting[cfg.Thresholds[id].Signal] = true
		}
	}
	plain := map[signal.Signal]decision.ThresholdID{}
	reclaim := map[signal.Signal]decision.ThresholdID{}
	for i, t := range cfg.Thresholds {
		o, ok := snap.Observations[t.Signal]
		if !ok || t.Inert() {
			continue
		}
		id := decision.ThresholdID(i)
		if _, seen := plain[t.Signal]; !seen && threshold.Met(t, o, false) {
			plain[t.Signal] = id
		}
		if _, seen := reclaim[t.Signal]; !seen && st.pressure[t.Signal] && acting[t.Signal] && threshold.Met(t, o, true) {
			reclaim[t.Signal] = id
		}
	}
	for sig, id := range reclaim {
		if _, ok := plain[sig]; !ok {
			plain[sig] = id
		}
	}
	return plain
}

// events emits the node events when pressure starts and ends.
func (st *State) events(snap signal.Snapshot, cfg threshold.Config, met map[signal.Signal]decision.ThresholdID, p *Plan) {
	switch {
	case len(met) > 0 && st.episode == nil:
		sig := firstSignal(met)
		observed, limit := describe(cfg, met[sig], snap.Observations)
		st.episode = &episode{signal: sig, threshold: limit}
		p.NodeEvents = append(p.NodeEvents, NodeEvent{Kind: PressureStarted, Signal: sig, Observed: observed, Limit: limit})
	case len(met) == 0 && st.episode != nil:
		sig := st.episode.signal
		observed := threshold.FormatAvailable(snap.Observations[sig].Available, sig)
		p.NodeEvents = append(p.NodeEvents, NodeEvent{Kind: PressureEnded, Signal: sig, Observed: observed})
		st.episode = nil
	}
}

// firstSignal picks the signal an episode is reported by: memory signals first, then by name.
func firstSignal(met map[signal.Signal]decision.ThresholdID) signal.Signal {
	sigs := sortedSignals(met)
	sort.SliceStable(sigs, func(i, j int) bool { return sigs[i].IsMemory() && !sigs[j].IsMemory() })
	return sigs[0]
}

func sortedSignals[V any](m map[signal.Signal]V) []signal.Signal {
	out := make([]signal.Signal, 0, len(m))
	for s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
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

// taint returns the wanted state of the pressure taint: on while a threshold of ours is met and for
// TaintHysteresis after, so that a signal hovering at the threshold does not flip it every step.
func (st *State) taint(now time.Time, cfg Config) Taint {
	want := !st.lastPressure.IsZero() && now.Sub(st.lastPressure) <= cfg.TaintHysteresis
	v := st.taintValue
	if v == "" {
		v = "pressure"
	}
	return Taint{Want: want, Value: v}
}

// remember keeps this step's observations for the next one (trend and crossing estimates).
func (st *State) remember(snap signal.Snapshot) {
	for sig, o := range snap.Observations {
		st.last[sig] = o
	}
}
