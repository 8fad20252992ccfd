package sim

import (
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

// LocalSample is one read of the node's cgroups with the agent's own reader (`kubectl pressure record
// --local`): what pressure-agent sees at that moment, not cAdvisor's cache.
type LocalSample struct {
	At time.Time
	// Memory holds the signals read: NodeCapacity is 0 when memory.available was not read, PodsKnown
	// false when allocatableMemory.available was not.
	Memory Memory
	// Pods holds each pod cgroup read, by UID (Time = At).
	Pods map[string]signal.PodStats
}

// agentViewer is a World that holds what the agent itself read; AgentView returns nil when it holds
// nothing.
type agentViewer interface {
	AgentView() World
}

// localWorld is a recording seen by the agent: fresh reads (Memory, Usage) from the local samples, the
// nearest at or before t; before the first one, and for what a sample lacks, the recording's Summary.
// Cached (the kubelet's cAdvisor cache) is the recording's. The pods are the recording's, but an evicted
// pod's release is where the local reads show it (localRelease): the Summary's snapshots place it
// within a second or more, and in between the local reads already lack the pod's memory while a run
// that did not evict it would not yet count it back (node.memory).
type localWorld struct {
	*replayWorld
	s     []LocalSample
	reads map[string][]PodSample
	pods  []PodInfo
	// after holds, for each pod the recorded agent evicted, how long after its ledger's time the local
	// reads lost the pod (ReleaseAfter).
	after map[string]time.Duration
}

// releaser is a World that knows how long after the recorded agent's eviction of a pod its memory left
// the node.
type releaser interface {
	ReleaseAfter(uid string) (time.Duration, bool)
}

// ReleaseAfter is how long after the recorded agent's eviction of the pod (its ledger's time, after the
// Eviction API answered) the local reads lost it; false for a pod the recorded agent did not evict or
// whose release the reads do not show. The time is the pod's own: a pod that exits on SIGTERM is gone in
// tens of milliseconds, one that waits out its grace period (a sleep) or many processes (a fork loop)
// take a second or more (soak seed 20261205 episode 33's rerun: 54-68ms for the memory hogs, 0.97-1.97 s
// for the others).
func (w *localWorld) ReleaseAfter(uid string) (time.Duration, bool) {
	d, ok := w.after[uid]
	return d, ok
}

// AgentView returns the world pressure-agent's run reads: the local samples when the recording has any.
func (w *replayWorld) AgentView() World {
	if len(w.r.Local) == 0 {
		return nil
	}
	s, reads := w.r.localReads()
	lw := &localWorld{replayWorld: w, s: s, reads: reads, pods: append([]PodInfo(nil), w.pods...), after: map[string]time.Duration{}}
	for i := range lw.pods {
		p := &lw.pods[i]
		if p.End != EndEvicted {
			continue
		}
		if at, n, ok := localRelease(s, lw.reads[p.Candidate.UID], p.Candidate.UID, p.Ended); ok {
			p.Released = at
			if p.Evictor() == ActorAgent {
				lw.after[p.Candidate.UID] = at.Sub(p.Ended)
			}
			lw.reads[p.Candidate.UID] = lw.reads[p.Candidate.UID][:n]
		}
	}
	return lw
}

// localReads returns the recording's local samples by time and each pod's reads in them, by UID.
func (r Recording) localReads() ([]LocalSample, map[string][]PodSample) {
	s := append([]LocalSample{}, r.Local...)
	sort.SliceStable(s, func(i, j int) bool { return s[i].At.Before(s[j].At) })
	reads := map[string][]PodSample{}
	for _, x := range s {
		for uid, ps := range x.Pods {
			ps.Time = x.At
			reads[uid] = append(reads[uid], PodSample{Stats: ps, Seen: x.At})
		}
	}
	return s, reads
}

// releaseWindow is how long before its recorded time an eviction's release may show in the local reads.
// The kubelet's eviction time is the start of its decision's second (DisruptionTarget); the agent's is
// its ledger's, written after the Eviction API answered, by when the kubelet may have killed the pod
// already (the soak's stress pods exit on SIGTERM within tens of milliseconds), and a local sample is
// stamped when its read starts, before it reaches the pod's cgroup (soak episode 0 of seed 20261205:
// the read stamped 15.151 lost hog-1, whose eviction the API server received at 15.160 and the ledger
// dates 15.212).
const releaseWindow = time.Second

// localRelease finds where the local reads s show an evicted pod's memory leave: the first sample from
// releaseWindow before ended on that lacks the pod, or whose working set of it is below half the read
// before (a kill takes all of a pod's memory at once; a pod's own swings are slower than one read
// interval), when no later read holds the pod at that read's size again (comesBack); or the sample
// before it when that one is torn (tornBy). It returns that time and how many
// of the pod's reads (reads, ascending) came before it; ok is false when the reads show no release (the
// recording ended first, or the pod was never read).
func localRelease(s []LocalSample, reads []PodSample, uid string, ended time.Time) (time.Time, int, bool) {
	if len(reads) == 0 {
		return time.Time{}, 0, false
	}
	from := ended.Add(-releaseWindow)
	n := 0 // reads before the sample looked at
	var prev int64 = -1
	for i, x := range s {
		ps, ok := x.Pods[uid]
		if x.At.Before(from) {
			if ok {
				n, prev = n+1, workingSet(ps)
			}
			continue
		}
		if n > 0 && (!ok || (prev > 0 && workingSet(ps) < prev/2)) && !comesBack(s[i+1:], uid, prev) {
			if i >= 2 && tornBy(s[i-2], s[i-1], x, uid, prev) {
				return s[i-1].At, n - 1, true
			}
			return x.At, n, true
		}
		if ok {
			n, prev = n+1, workingSet(ps)
		}
	}
	return time.Time{}, 0, false
}

// comesBack reports whether a read of s holds the pod with a working set of at least ws: memory that
// comes back was not released (a kill takes it for good). A starting pod's few MiB swing (soak seed 1
// episode 2, 2026-12-06: hog-2 read 3.5Mi, then 1.4Mi, 0.9 s before its eviction, then grew to 640Mi):
// taking such a dip for the release froze the pod at its size then, and simulate evicted three other
// pods in its place.
func comesBack(s []LocalSample, uid string, ws int64) bool {
	for _, x := range s {
		if ps, ok := x.Pods[uid]; ok && workingSet(ps) >= ws {
			return true
		}
	}
	return false
}

// tornBy reports whether sample b, the last to read the pod (ws, its working set there), is torn by the
// pod's release: a sample reads the pods first and the signals after them (the agent's order), so a
// kill between the two reads shows in b's signals, not in b's read of the pod. b is torn when its
// signal fell by at least half the pod's working set since a, and c's did not since b (soak seed
// 20261205 episode 33's rerun: the read at 43.787 held steady-burstable's 98.4Mi while the pods cgroup
// had given it back already, and a model that synced then credited the pod in flight a second time).
// The pods cgroup's working set is the signal when both samples read it; else the node's.
func tornBy(a, b, c LocalSample, uid string, ws int64) bool {
	if _, ok := b.Pods[uid]; !ok || ws <= 0 {
		return false
	}
	used := func(x LocalSample) int64 { return x.Memory.NodeWorkingSet }
	if a.Memory.PodsKnown && b.Memory.PodsKnown && c.Memory.PodsKnown {
		used = func(x LocalSample) int64 { return x.Memory.PodsWorkingSet }
	} else if a.Memory.NodeCapacity == 0 || b.Memory.NodeCapacity == 0 || c.Memory.NodeCapacity == 0 {
		return false
	}
	return used(a)-used(b) >= ws/2 && used(b)-used(c) < ws/2
}

// Pods returns the recording's pods with the evicted ones' releases where the local reads show them.
func (w *localWorld) Pods() []PodInfo { return w.pods }

// at returns the index of the last sample at or before t, or -1.
func (w *localWorld) at(t time.Time) int {
	return sort.Search(len(w.s), func(i int) bool { return w.s[i].At.After(t) }) - 1
}

func (w *localWorld) Memory(t time.Time) Memory {
	m := w.replayWorld.Memory(t)
	i := w.at(t)
	if i < 0 {
		return m
	}
	l := w.s[i].Memory
	if l.NodeCapacity > 0 {
		m.NodeCapacity, m.NodeWorkingSet = l.NodeCapacity, l.NodeWorkingSet
	}
	if l.PodsKnown {
		m.PodsCapacity, m.PodsWorkingSet, m.PodsKnown = l.PodsCapacity, l.PodsWorkingSet, true
	}
	return m
}

// Usage is the pod's last local read at or before t. Past its last read (for an evicted pod, its last
// before the release: localRelease), a pod the recorded kubelet or agent evicted is extrapolated at its locally read rate (a run that did not evict it keeps it growing); any
// other pod keeps its last read. A pod never read locally, or t before the first sample, falls back to
// the Summary.
func (w *localWorld) Usage(uid string, t time.Time) (signal.PodStats, bool) {
	s, ok := w.reads[uid]
	if !ok || w.at(t) < 0 {
		return w.replayWorld.Usage(uid, t)
	}
	i := sort.Search(len(s), func(i int) bool { return s[i].Stats.Time.After(t) })
	switch {
	case i == 0:
		return signal.PodStats{}, false
	case i < len(s):
		return s[i-1].Stats, true
	}
	if p := w.byUID[uid]; p != nil && p.Info.End == EndEvicted {
		return w.beyond(p, s, t), true
	}
	return s[len(s)-1].Stats, true
}

// LocalInterval is the median spacing of the local samples (0 with fewer than two).
func (r Recording) LocalInterval() time.Duration {
	if len(r.Local) < 2 {
		return 0
	}
	d := make([]time.Duration, 0, len(r.Local)-1)
	for i := 1; i < len(r.Local); i++ {
		d = append(d, r.Local[i].At.Sub(r.Local[i-1].At))
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	return d[len(d)/2]
}
