package sim

import (
	"math/rand"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// Ramp is a working set over time: Start bytes, then, from After on, Rate more bytes per second
// (negative: fewer), until Until is reached (0: no bound; the working set never goes below 0).
type Ramp struct {
	Start int64
	Rate  int64
	Until int64
	After time.Duration
}

// At returns the working set d after the ramp's origin.
func (r Ramp) At(d time.Duration) int64 {
	if d < 0 {
		return 0
	}
	v := r.Start
	if d > r.After && r.Rate != 0 {
		grow := float64(r.Rate) * (d - r.After).Seconds()
		v = r.Start + int64(grow)
		if r.Until > 0 && (r.Rate > 0 && v > r.Until || r.Rate < 0 && v < r.Until) {
			v = r.Until
		}
	}
	return max(v, 0)
}

// Reaches returns when the ramp first reaches v (ok false if never).
func (r Ramp) Reaches(v int64) (time.Duration, bool) {
	switch {
	case r.Start >= v:
		return 0, true
	case r.Rate <= 0 || r.Until > 0 && r.Until < v:
		return 0, false
	}
	return r.After + time.Duration(float64(v-r.Start)/float64(r.Rate)*float64(time.Second)), true
}

// ModelPod is one pod of a Model.
type ModelPod struct {
	// Candidate describes the pod (Stats nil); its first container gets the usage.
	Candidate rank.Candidate
	// Start is when the pod appears, after the model's start.
	Start time.Duration
	// Usage is the pod's working set from Start on.
	Usage Ramp
	// Cache is how much of the working set is clean, active page cache the pod holds and does not read
	// back (a pod that read a file twice): the pod's memory.stat shows it as active_file, and a reclaim
	// frees it for good. 0: none, and the pod has no memory.stat.
	Cache int64
	// Limit is the pod's memory limit (0: none): the working set never exceeds it (the kernel would
	// OOM-kill the container there; the model holds it at the limit, see Model.Notes).
	Limit int64
	// PDB: a PodDisruptionBudget that allows no disruption protects the pod (PodInfo.PDB).
	PDB bool
}

// Model is a node described by workload models: its memory, the working set outside the pods cgroup
// and the pods with their usage ramps.
type Model struct {
	Start    time.Time
	Duration time.Duration
	// NodeCapacity is the node's memory (memory.available's capacity).
	NodeCapacity int64
	// PodsCapacity is the pods cgroup limit (allocatableMemory.available's capacity).
	PodsCapacity int64
	// System is the working set outside the pods cgroup (system daemons, the kubelet).
	System Ramp
	Pods   []ModelPod
	// PodStatsInterval and PodStatsMaxInterval model cAdvisor's cache of pod stats, which the kubelet
	// ranks by: cAdvisor measures each pod at intervals drawn between the two (its housekeeping
	// interval with jitter: 10 s to 20 s), the first time within one interval of the pod's start; the
	// kubelet reads the latest sample. The seeded rand draws the intervals.
	PodStatsInterval, PodStatsMaxInterval time.Duration
}

// modelWorld is a Model with its pods' measurement times.
type modelWorld struct {
	m     Model
	pods  []PodInfo
	byUID map[string]int
	// samples are each pod's cAdvisor measurement times so far, drawn from its own rand on demand.
	samples [][]time.Time
	rands   []*rand.Rand
}

// World returns the Model as a World; r seeds each pod's cAdvisor measurement times.
func (m Model) World(r *rand.Rand) World {
	w := &modelWorld{m: m, byUID: map[string]int{}}
	for i, p := range m.Pods {
		w.byUID[p.Candidate.UID] = i
		w.rands = append(w.rands, rand.New(rand.NewSource(r.Int63())))
		w.samples = append(w.samples, nil)
		w.pods = append(w.pods, PodInfo{Candidate: p.Candidate, Since: m.Start.Add(p.Start), PDB: p.PDB})
	}
	sortPods(w.pods)
	return w
}

// sampleTime returns pod i's latest measurement at or before t (ok false before the first).
func (w *modelWorld) sampleTime(i int, t time.Time) (time.Time, bool) {
	lo, hi := w.m.PodStatsInterval, max(w.m.PodStatsMaxInterval, w.m.PodStatsInterval)
	if lo <= 0 {
		return t, true // no cache: always fresh
	}
	draw := func(a, b time.Duration) time.Duration {
		if b <= a {
			return a
		}
		return a + time.Duration(w.rands[i].Int63n(int64(b-a)))
	}
	s := w.samples[i]
	if len(s) == 0 {
		s = append(s, w.m.Start.Add(w.m.Pods[i].Start).Add(draw(0, lo)))
	}
	for !s[len(s)-1].After(t) {
		s = append(s, s[len(s)-1].Add(draw(lo, hi)))
	}
	w.samples[i] = s
	n := sort.Search(len(s), func(k int) bool { return s[k].After(t) })
	if n == 0 {
		return time.Time{}, false
	}
	return s[n-1], true
}

func (w *modelWorld) Span() (time.Time, time.Time) { return w.m.Start, w.m.Start.Add(w.m.Duration) }

func (w *modelWorld) Pods() []PodInfo { return w.pods }

func (w *modelWorld) Memory(t time.Time) Memory {
	var pods int64
	for i := range w.m.Pods {
		pods += w.usage(i, t)
	}
	return Memory{NodeCapacity: w.m.NodeCapacity, NodeWorkingSet: w.m.System.At(t.Sub(w.m.Start)) + pods,
		PodsCapacity: w.m.PodsCapacity, PodsWorkingSet: pods, PodsKnown: true}
}

// usage is pod i's working set at t.
func (w *modelWorld) usage(i int, t time.Time) int64 {
	p := w.m.Pods[i]
	v := p.Usage.At(t.Sub(w.m.Start.Add(p.Start)))
	if t.Before(w.m.Start.Add(p.Start)) {
		return 0
	}
	if p.Limit > 0 {
		v = min(v, p.Limit)
	}
	return v
}

func (w *modelWorld) Usage(uid string, t time.Time) (signal.PodStats, bool) {
	i, ok := w.byUID[uid]
	if !ok || t.Before(w.m.Start.Add(w.m.Pods[i].Start)) {
		return signal.PodStats{}, false
	}
	return w.stats(i, t), true
}

func (w *modelWorld) Cached(uid string, t time.Time) (signal.PodStats, bool) {
	i, ok := w.byUID[uid]
	if !ok {
		return signal.PodStats{}, false
	}
	at, ok := w.sampleTime(i, t)
	if !ok {
		return signal.PodStats{}, false
	}
	return w.stats(i, at), true
}

func (w *modelWorld) stats(i int, at time.Time) signal.PodStats {
	c := w.m.Pods[i].Candidate
	v := uint64(w.usage(i, at))
	s := signal.PodStats{UID: c.UID, Namespace: c.Namespace, Name: c.Name, Time: at, MemoryWorkingSet: signal.Uint64(v)}
	if len(c.Containers) > 0 {
		s.Containers = []signal.ContainerStats{{Name: c.Containers[0].Name, MemoryWorkingSet: signal.Uint64(v)}}
	}
	if cache := w.m.Pods[i].Cache; cache > 0 {
		z := signal.Uint64(0)
		s.Memory = &signal.MemoryStat{ActiveFile: signal.Uint64(min(uint64(cache), v)), InactiveFile: z, Dirty: z, Writeback: z,
			WorkingsetRefaultFile: z, WorkingsetActivateFile: z, PageSize: 4096}
	}
	return s
}

// Notes returns remarks on the model itself: pods whose ramp reaches their memory limit.
func (m Model) Notes() []string {
	var out []string
	for _, p := range m.Pods {
		if p.Limit <= 0 {
			continue
		}
		if d, ok := p.Usage.Reaches(p.Limit); ok && p.Start+d <= m.Duration {
			out = append(out, podName(p.Candidate)+" reaches its memory limit "+FormatBytes(p.Limit)+" at "+
				FormatOffset(p.Start+d)+": the kernel would OOM-kill the container there; the model holds it at the limit")
		}
	}
	return out
}

func podName(c rank.Candidate) string { return c.Namespace + "/" + c.Name }
