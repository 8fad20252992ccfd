package sim

import (
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// node is one run's view of the world: the world plus the run's own evictions.
type node struct {
	w      World
	pods   []PodInfo
	killed map[string]kill
	// reclaimed holds, by UID, the page cache the run's reclaims freed: the model's cache is never read
	// back, so it stays freed.
	reclaimed map[string]int64
	// admitted holds the pods whose appearance the run has decided on; kept those it kept off the node
	// (their owner avoided it): they never count.
	admitted, kept map[string]bool
}

// kill is a run's eviction of one pod.
type kill struct {
	by       Actor
	at       time.Time // when it was decided
	released time.Time // when the pod's memory is freed and it stops being active
	cleaned  time.Time // when the kubelet's pod-cleanup check passes
	deletion time.Time // the pod's deletion timestamp (an eviction through the API)
}

func newNode(w World) *node {
	return &node{w: w, pods: w.Pods(), killed: map[string]kill{}, reclaimed: map[string]int64{},
		admitted: map[string]bool{}, kept: map[string]bool{}}
}

// evict records an eviction; a pod already being evicted keeps the earlier release.
func (n *node) evict(uid string, k kill) {
	if prev, ok := n.killed[uid]; ok {
		if !k.released.Before(prev.released) {
			return
		}
		k.by = prev.by
	}
	n.killed[uid] = k
}

// gone reports whether the run has freed the pod's memory by t.
func (n *node) gone(uid string, t time.Time) bool {
	if n.kept[uid] {
		return true
	}
	k, ok := n.killed[uid]
	return ok && !t.Before(k.released)
}

// memory is the world's memory at t with the run's evictions applied: a pod the run evicted stops
// counting once released; a pod the world's kubelet evicted but the run did not keeps counting.
func (n *node) memory(t time.Time) Memory {
	m := n.w.Memory(t)
	var delta int64
	for _, p := range n.pods {
		uid := p.Candidate.UID
		gone := n.gone(uid, t)
		switch {
		case p.counted(t) && gone:
			delta -= n.usage(uid, t)
		case !p.counted(t) && p.End == EndEvicted && !t.Before(p.Released) && !gone:
			delta += n.usage(uid, t)
		case p.counted(t):
			delta -= n.reclaimed[uid]
		}
	}
	m.NodeWorkingSet += delta
	m.PodsWorkingSet += delta
	return m
}

func (n *node) usage(uid string, t time.Time) int64 {
	s, ok := n.w.Usage(uid, t)
	if !ok {
		return 0
	}
	return max(0, workingSet(s)-n.reclaimed[uid])
}

// reclaim frees up to bytes of the pod's page cache (its memory.stat's active_file not yet reclaimed)
// at t and returns what it freed.
func (n *node) reclaim(uid string, bytes int64, t time.Time) int64 {
	s, ok := n.w.Usage(uid, t)
	if !ok || s.Memory == nil || s.Memory.ActiveFile == nil {
		return 0
	}
	free := max(0, min(bytes, int64(*s.Memory.ActiveFile)-n.reclaimed[uid]))
	n.reclaimed[uid] += free
	return free
}

// stats returns the world's stats of the pod with the run's reclaims applied (working set and
// active_file lowered).
func (n *node) stats(uid string, t time.Time) (signal.PodStats, bool) {
	s, ok := n.w.Usage(uid, t)
	r := n.reclaimed[uid]
	if !ok || r == 0 {
		return s, ok
	}
	out := withWorkingSet(s, max(0, workingSet(s)-r), s.Time)
	if s.Memory != nil && s.Memory.ActiveFile != nil {
		m := *s.Memory
		m.ActiveFile = signal.Uint64(uint64(max(0, int64(*s.Memory.ActiveFile)-r)))
		out.Memory = &m
	}
	return out, true
}

// active returns the pods active at t: appeared, not ended for a reason other than the recorded
// kubelet's eviction, and not yet freed by this run.
func (n *node) active(t time.Time) []PodInfo {
	var out []PodInfo
	for _, p := range n.pods {
		switch {
		case t.Before(p.Since), p.End == EndGone && !t.Before(p.Ended), n.gone(p.Candidate.UID, t):
			continue
		}
		out = append(out, p)
	}
	return out
}

// observations returns the memory observations at t, measured at t.
func observations(m Memory, t time.Time) map[signal.Signal]signal.Observation {
	obs := map[signal.Signal]signal.Observation{}
	if m.NodeCapacity > 0 {
		obs[signal.MemoryAvailable] = signal.Observation{Available: m.NodeCapacity - m.NodeWorkingSet,
			Capacity: m.NodeCapacity, Time: t, Source: signal.SourceSummary}
	}
	if m.PodsKnown {
		obs[signal.AllocatableMemoryAvailable] = signal.Observation{Available: m.PodsCapacity - m.PodsWorkingSet,
			Capacity: m.PodsCapacity, Time: t, Source: signal.SourceSummary}
	}
	return obs
}

// candidates returns the pods with their stats from stats (nil: no stats), in the given order.
func candidates(pods []PodInfo, stats func(uid string) (signal.PodStats, bool)) []rank.Candidate {
	out := make([]rank.Candidate, 0, len(pods))
	for _, p := range pods {
		c := p.Candidate
		if s, ok := stats(c.UID); ok {
			c.Stats = &s
		}
		out = append(out, c)
	}
	return out
}
