package sim

import (
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// summary sums up the run: evictions by actor, the first one, the lowest available amount of each
// memory signal, how long each stayed below the kubelet's hard threshold and how long the kubelet
// reported MemoryPressure.
func (r *run) summary(o Options) Summary {
	s := Summary{MinAvailable: map[string]string{}, BelowThreshold: map[string]string{}}
	for _, e := range r.events {
		if e.Kind != KindEvict {
			continue
		}
		s.Evictions++
		if e.Actor == ActorKubelet {
			s.ByKubelet++
		} else {
			s.ByAgent++
		}
		if s.FirstEviction == nil {
			d := e.Offset
			s.FirstEviction = &d
		}
	}
	lines := kubeletLines(o.Kubelet, r.world.Memory(r.start))
	for _, sig := range []signal.Signal{signal.MemoryAvailable, signal.AllocatableMemoryAvailable} {
		var minV int64
		var below time.Duration
		seen := false
		for _, x := range r.samples {
			v, ok := x.node, true
			if sig == signal.AllocatableMemoryAvailable {
				v, ok = x.pod, x.hasPods
			}
			if !ok {
				continue
			}
			if !seen || v < minV {
				minV, seen = v, true
			}
			for _, l := range lines {
				if l.Signal == string(sig) && v < l.Bytes {
					below += r.timing.Step
					break
				}
			}
		}
		if seen {
			s.MinAvailable[string(sig)] = formatMi(minV)
			s.BelowThreshold[string(sig)] = below.String()
		}
	}
	s.MemoryPressure = Duration(r.pressureTime())
	return s
}

// pressureTime is how long the kubelet reported MemoryPressure in the run.
func (r *run) pressureTime() time.Duration {
	var total time.Duration
	var on time.Time
	for _, e := range r.events {
		if e.Kind != KindCondition || e.Subject != string(signal.MemoryPressure) {
			continue
		}
		if on.IsZero() {
			on = e.At
			continue
		}
		total += e.At.Sub(on)
		on = time.Time{}
	}
	if !on.IsZero() {
		_, end := r.world.Span()
		total += end.Sub(on)
	}
	return total
}

// kubeletLines resolves the kubelet's hard memory thresholds against the capacities at the start.
func kubeletLines(cfg threshold.Config, m Memory) []ThresholdLine {
	obs := observations(m, time.Time{})
	var out []ThresholdLine
	for _, th := range cfg.Thresholds {
		o, ok := obs[th.Signal]
		if !ok || !th.Signal.IsMemory() || th.Inert() || !th.IsHard() {
			continue
		}
		l := ThresholdLine{Actor: ActorKubelet, Signal: string(th.Signal),
			Threshold: threshold.FormatThreshold(th.Value, o.Capacity), Bytes: th.Value.Resolve(o.Capacity)}
		if len(out) == 0 || out[len(out)-1] != l {
			out = append(out, l) // the allocatableMemory.available copy of memory.available's threshold
		}
	}
	return out
}

// recorded returns the evictions the world itself holds (the recorded kubelet's and agent's), in time order
// (then by pod).
func recorded(w World) []RecordedEviction {
	start, _ := w.Span()
	var out []RecordedEviction
	for _, p := range w.Pods() {
		if p.End == EndEvicted {
			out = append(out, RecordedEviction{Pod: p.Key(), UID: p.Candidate.UID, Message: p.Message,
				Outcome: Outcome{At: p.Ended, Offset: Duration(p.Ended.Sub(start)), By: p.Evictor()}})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	for i := range out {
		out[i].Order = i + 1
	}
	return out
}

// differences lines up, for every pod evicted in a run or in the recording, when and by whom, sorted
// by the earliest of those times, then by pod.
func differences(res Result) []Difference {
	byPod := map[string]*Difference{}
	get := func(pod string) *Difference {
		if d, ok := byPod[pod]; ok {
			return d
		}
		d := &Difference{Pod: pod}
		byPod[pod] = d
		return d
	}
	for _, run := range res.Runs {
		for _, e := range run.Events {
			if e.Kind != KindEvict || e.Eviction == nil {
				continue
			}
			d := get(e.Eviction.Pod)
			o := &Outcome{At: e.At, Offset: e.Offset, By: e.Actor, Order: e.Eviction.Order}
			if run.Name == RunKubelet && d.Kubelet == nil {
				d.Kubelet = o
			}
			if run.Name == RunAgent && d.Agent == nil {
				d.Agent = o
			}
		}
	}
	for _, r := range res.Recorded {
		o := r.Outcome
		get(r.Pod).Recorded = &o
	}
	out := make([]Difference, 0, len(byPod))
	for _, d := range byPod {
		out = append(out, *d)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := earliest(out[i]), earliest(out[j])
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		if a.Order != b.Order {
			return a.Order < b.Order
		}
		return out[i].Pod < out[j].Pod
	})
	return out
}

// earliest is the earliest outcome of a difference (the first given on a tie).
func earliest(d Difference) Outcome {
	var e *Outcome
	for _, o := range []*Outcome{d.Kubelet, d.Agent, d.Recorded} {
		if o != nil && (e == nil || o.At.Before(e.At)) {
			e = o
		}
	}
	return *e
}
