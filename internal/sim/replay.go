package sim

import (
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// Recording is a recorded timeline of one node (`kubectl pressure record`), converted: the node's and
// the pods cgroup's memory samples and every pod seen, with its stats samples.
type Recording struct {
	Node       string
	Start, End time.Time
	// NodeMemory (memory.available) and PodsMemory (allocatableMemory.available) are the distinct
	// samples, ascending by measurement time (the Summary's times are whole seconds: two samples may
	// share one, in the order they were seen).
	NodeMemory, PodsMemory []MemorySample
	// StatsTimes are the distinct times, to the millisecond, of the kubelet's measurements of the node's
	// memory (record's reads of the kubelet's /metrics/resource), ascending; empty when the recording
	// has none. Each sync of the kubelet's eviction loop, and of its memcg notifier, takes a fresh one.
	StatsTimes []time.Time
	Pods       []RecordedPod
	// Snapshots is how many snapshots the recording holds.
	Snapshots int
	// Decisions are what the recorded kubelet saw when it decided its evictions: the available amount
	// its eviction message gives, at the middle of the eviction's second (before the pod's memory is
	// freed). Each is taken as a sample of the memory signal it is nearest to.
	Decisions []MemorySample
	// Notified are the recorded kubelet's hard memory thresholds when its memcg notifier was on
	// (kernelMemcgNotification; empty when off): it then synced the moment available crossed one, so
	// a recorded eviction decided after a sample above it dates the crossing (see replayWorld.steady).
	Notified []threshold.Threshold
	// Local are the agent's own reads of the node's cgroups (record --local), ascending; empty when the
	// recording has none. pressure-agent's run reads them (see Recording.World's AgentView).
	Local []LocalSample
}

// MemorySample is one measurement of a memory signal.
type MemorySample struct {
	At                  time.Time
	Available, Capacity int64
	// decides marks the sample of the sync that decided a recorded eviction (replay only); decision
	// one taken from an eviction message.
	decides, decision bool
}

// RecordedPod is one pod of a recording.
type RecordedPod struct {
	Info PodInfo
	// Samples are the pod's distinct stats samples, ascending by measurement time (Stats.Time).
	Samples []PodSample
}

// PodSample is one stats sample of a pod and when the recording first saw it (the Summary serves
// cAdvisor's cache: a sample appears some time after it was measured).
type PodSample struct {
	Stats signal.PodStats
	Seen  time.Time
}

// extrapolationWindow is how far back from its last sample a pod's rate is measured when the
// simulation keeps a pod the recorded kubelet evicted.
const extrapolationWindow = 15 * time.Second

type replayWorld struct {
	r     Recording
	pods  []PodInfo
	byUID map[string]*RecordedPod
	// node and podsCg are the memory samples without the pods that end in the recording (their
	// usage added back): interpolating them and subtracting those pods' usage while they run puts
	// each release at its time, not spread over the (10-20 s) gap between two samples.
	node, podsCg []MemorySample
	ending       []*RecordedPod
}

// World returns the recording as a World.
func (r Recording) World() World {
	w := &replayWorld{r: r, byUID: map[string]*RecordedPod{}}
	for i := range r.Pods {
		p := &r.Pods[i]
		w.byUID[p.Info.Candidate.UID] = p
		w.pods = append(w.pods, p.Info)
		if p.Info.End != EndNone {
			w.ending = append(w.ending, p)
		}
	}
	sortPods(w.pods)
	node, pods := append([]MemorySample{}, r.NodeMemory...), append([]MemorySample{}, r.PodsMemory...)
	for _, d := range r.Decisions {
		na, _, nok := interpolate(node, d.At)
		pa, pc, pok := interpolate(pods, d.At)
		d.decision = true
		switch {
		case pok && (!nok || abs(pa-d.Available) < abs(na-d.Available)):
			d.Capacity = pc
			pods = insertSample(pods, d)
		case nok:
			d.Capacity = node[0].Capacity
			node = insertSample(node, d)
		}
	}
	w.node, w.podsCg = w.steady(node, signal.MemoryAvailable), w.steady(pods, signal.AllocatableMemoryAvailable)
	return w
}

// insertSample puts x among the samples by time, after those of the same time.
func insertSample(s []MemorySample, x MemorySample) []MemorySample {
	i := sort.Search(len(s), func(i int) bool { return s[i].At.After(x.At) })
	return append(s[:i], append([]MemorySample{x}, s[i:]...)...)
}

// steady returns the samples with the usage of the pods ending in the recording, counted at each
// sample's time, given back as available. The Summary's times are whole seconds, like the
// DisruptionTarget time of an eviction: a sample of the second in which a pod was evicted may have
// been taken before its memory was freed (by the very sync that evicted it) or after. For such a
// sample each pod evicted in that second is taken as counted or not, whichever brings the sample
// nearest the line through the other samples (counted on a tie); more than maxAmbiguous such pods
// in one second leave the sample out.
//
// A sample's time, a whole second, is taken as the middle of that second (the measurement was made
// within it). With the recorded kubelet's memcg notifier on, the sample of the sync that decided an
// eviction (a sample of the eviction's second taken before the memory was freed) after a sample at or
// above a hard threshold of sig is marked: the notifier synced when available crossed it, so
// interpolate holds the sample before until the eviction's second instead of spreading the change
// over the gap. (After a sample below the threshold the kubelet's loop decided, the signal was below
// already, and the change stays spread.)
func (w *replayWorld) steady(s []MemorySample, sig signal.Signal) []MemorySample {
	var clear []MemorySample
	for _, x := range s {
		if len(w.evictedIn(x.At)) == 0 || x.decision {
			x.Available += w.endingUsage(x.At, nil, 0)
			clear = append(clear, mid(x))
		}
	}
	var out []MemorySample
	for i, x := range s {
		pods := w.evictedIn(x.At)
		raw := x.Available
		switch {
		case x.decision:
			x.Available += w.endingUsage(x.At, nil, 0)
			x.decides = i > 0 && w.r.crossed(sig, s[i-1], raw)
		case len(pods) == 0:
			x.Available += w.endingUsage(x.At, nil, 0)
		case len(pods) > maxAmbiguous:
			continue
		default:
			var before bool
			x.Available, before = w.likeliest(x, pods, clear)
			x.decides = before && i > 0 && w.r.crossed(sig, s[i-1], raw)
		}
		out = append(out, mid(x))
	}
	return out
}

// crossed reports whether available went from prev (at or above) to below a notified hard threshold
// of sig.
func (r Recording) crossed(sig signal.Signal, prev MemorySample, now int64) bool {
	for _, th := range r.Notified {
		if th.Signal == sig && th.IsHard() && !th.Inert() {
			level := th.Value.Resolve(prev.Capacity)
			if prev.Available >= level && now < level {
				return true
			}
		}
	}
	return false
}

// mid moves a whole-second sample time to the middle of its second.
func mid(x MemorySample) MemorySample {
	if x.At.Nanosecond() == 0 {
		x.At = x.At.Add(500 * time.Millisecond)
	}
	return x
}

// maxAmbiguous bounds the pods evicted in one second whose release a sample is tested against.
const maxAmbiguous = 4

// likeliest is the steady value of sample x taken in the second the pods were evicted in: of the
// hypotheses (each pod's memory freed before the sample or not), the one nearest the interpolation
// of the clear samples; with no clear sample, every pod counted. before reports that some pod still
// counted: the sample was taken before its memory was freed.
func (w *replayWorld) likeliest(x MemorySample, pods []*RecordedPod, clear []MemorySample) (int64, bool) {
	all := 1<<len(pods) - 1
	ref, _, ok := interpolate(clear, mid(x).At)
	best, bestMask := x.Available+w.endingUsage(x.At, pods, all), all
	for mask := all - 1; ok && mask >= 0; mask-- {
		if v := x.Available + w.endingUsage(x.At, pods, mask); abs(v-ref) < abs(best-ref) {
			best, bestMask = v, mask
		}
	}
	return best, bestMask != 0
}

// evictedIn returns the pods the recorded kubelet may have evicted around t's second: the
// DisruptionTarget time is written during the kill, up to a second after the decision (seen on the
// e2e node), so the second of t or the one after.
func (w *replayWorld) evictedIn(t time.Time) []*RecordedPod {
	var out []*RecordedPod
	sec := t.Truncate(time.Second)
	for _, p := range w.ending {
		if end := p.Info.Ended.Truncate(time.Second); p.Info.End == EndEvicted && (sec.Equal(end) || sec.Add(time.Second).Equal(end)) {
			out = append(out, p)
		}
	}
	return out
}

// endingUsage is the working set at t of the pods that end in the recording and still count at t;
// the pods of hyp count when their bit in mask is set, whatever t.
func (w *replayWorld) endingUsage(t time.Time, hyp []*RecordedPod, mask int) int64 {
	var sum int64
	for _, p := range w.ending {
		counted := p.Info.counted(t)
		for i, h := range hyp {
			if h == p {
				counted = mask&(1<<i) != 0
			}
		}
		if !counted {
			continue
		}
		if st, ok := w.Usage(p.Info.Candidate.UID, t); ok {
			sum += workingSet(st)
		}
	}
	return sum
}

func (w *replayWorld) Span() (time.Time, time.Time) { return w.r.Start, w.r.End }

func (w *replayWorld) Pods() []PodInfo { return w.pods }

func (w *replayWorld) Memory(t time.Time) Memory {
	var m Memory
	ending := w.endingUsage(t, nil, 0)
	if a, c, ok := interpolate(w.node, t); ok {
		m.NodeCapacity, m.NodeWorkingSet = c, c-a+ending
	}
	if a, c, ok := interpolate(w.podsCg, t); ok {
		m.PodsCapacity, m.PodsWorkingSet, m.PodsKnown = c, c-a+ending, true
	}
	return m
}

// interpolate returns the available amount at t, linear between the samples around t and held
// before the first and after the last; before a sample that decides an eviction, the earlier sample
// is held until the deciding sample's second, then the change made within it.
func interpolate(s []MemorySample, t time.Time) (avail, capacity int64, ok bool) {
	if len(s) == 0 {
		return 0, 0, false
	}
	i := sort.Search(len(s), func(i int) bool { return s[i].At.After(t) })
	switch {
	case i == 0:
		return s[0].Available, s[0].Capacity, true
	case i == len(s):
		return s[i-1].Available, s[i-1].Capacity, true
	}
	a, b := s[i-1], s[i]
	if from := b.At.Add(-500 * time.Millisecond); b.decides && from.After(a.At) {
		if !t.After(from) {
			return a.Available, a.Capacity, true
		}
		a.At = from
	}
	f := float64(t.Sub(a.At)) / float64(b.At.Sub(a.At))
	return a.Available + int64(f*float64(b.Available-a.Available)), b.Capacity, true
}

// usable returns the pod's samples measured while it ran: for a pod the recorded kubelet evicted,
// those measured before the eviction.
func (p *RecordedPod) usable() []PodSample {
	if p.Info.End != EndEvicted {
		return p.Samples
	}
	n := sort.Search(len(p.Samples), func(i int) bool { return p.Samples[i].Stats.Time.After(p.Info.Ended) })
	return p.Samples[:n]
}

func (w *replayWorld) Usage(uid string, t time.Time) (signal.PodStats, bool) {
	p, ok := w.byUID[uid]
	if !ok {
		return signal.PodStats{}, false
	}
	s := p.usable()
	i := sort.Search(len(s), func(i int) bool { return s[i].Stats.Time.After(t) })
	switch {
	case i == 0:
		return signal.PodStats{}, false
	case i < len(s):
		a, b := s[i-1].Stats, s[i].Stats
		f := float64(t.Sub(a.Time)) / float64(b.Time.Sub(a.Time))
		v := workingSet(a) + int64(f*float64(workingSet(b)-workingSet(a)))
		return withWorkingSet(b, v, t), true
	}
	return w.beyond(p, s, t), true
}

// beyond is the pod's usage at t after its last sample: extrapolated at its recent rate when the
// recorded kubelet evicted it (a run that did not evict it keeps it growing), else held.
func (w *replayWorld) beyond(p *RecordedPod, s []PodSample, t time.Time) signal.PodStats {
	last := s[len(s)-1].Stats
	if p.Info.End != EndEvicted {
		out := last
		out.Time = t
		return out
	}
	return withWorkingSet(last, workingSet(last)+int64(rate(s)*t.Sub(last.Time).Seconds()), t)
}

// rate is the pod's working-set rate in bytes per second over the extrapolation window before its
// last sample (0 with fewer than two samples in it).
func rate(s []PodSample) float64 {
	last := s[len(s)-1].Stats
	for _, x := range s {
		if d := last.Time.Sub(x.Stats.Time); d > 0 && d <= extrapolationWindow {
			return float64(workingSet(last)-workingSet(x.Stats)) / d.Seconds()
		}
	}
	return 0
}

func (w *replayWorld) Cached(uid string, t time.Time) (signal.PodStats, bool) {
	p, ok := w.byUID[uid]
	if !ok {
		return signal.PodStats{}, false
	}
	s := p.usable()
	var got *PodSample
	for i := range s {
		if !s[i].Seen.After(t) && (got == nil || s[i].Stats.Time.After(got.Stats.Time)) {
			got = &s[i]
		}
	}
	if got == nil {
		return signal.PodStats{}, false
	}
	if p.Info.End != EndEvicted || got != &s[len(s)-1] {
		return got.Stats, true
	}
	// Past the last sample of an evicted pod: the cache goes on refreshing on the pod's interval.
	iv, lag := interval(s), got.Seen.Sub(got.Stats.Time)
	at := got.Stats.Time
	if iv > 0 {
		at = at.Add(t.Add(-lag).Sub(at) / iv * iv)
	}
	return w.beyond(p, s, at), true
}

// interval is the median spacing of the samples (0 with fewer than two).
func interval(s []PodSample) time.Duration {
	if len(s) < 2 {
		return 0
	}
	d := make([]time.Duration, 0, len(s)-1)
	for i := 1; i < len(s); i++ {
		d = append(d, s[i].Stats.Time.Sub(s[i-1].Stats.Time))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}
