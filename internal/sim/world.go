package sim

import (
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// World is the node being simulated: what really happens to its memory, independent of who evicts.
// A Model computes it from workload models; a Replay from a recording. Each run of the simulation
// applies its own evictions on top (see node.go): a pod a run evicts stops counting, a pod the
// recorded kubelet evicted but the run did not keeps counting, extrapolated.
type World interface {
	// Span bounds the timeline.
	Span() (start, end time.Time)
	// Pods returns every pod the world ever holds, sorted by namespace, name and UID.
	Pods() []PodInfo
	// Memory returns the world's node and pods-cgroup memory at t, with the world's own pod endings.
	Memory(t time.Time) Memory
	// Usage returns the pod's stats measured at t (what a reader of the pod's cgroup sees now), also
	// past the pod's end in the world (extrapolated). ok is false while the pod has no usage yet.
	Usage(uid string, t time.Time) (signal.PodStats, bool)
	// Cached returns the pod's stats as cAdvisor's cache serves them at t to the kubelet: an older
	// sample, with the time it was measured. ok is false when the cache holds none yet.
	Cached(uid string, t time.Time) (signal.PodStats, bool)
}

// Memory is the memory of the node and of its pods cgroup at one moment, in bytes.
type Memory struct {
	// NodeCapacity and NodeWorkingSet give memory.available = capacity − working set.
	NodeCapacity, NodeWorkingSet int64
	// PodsCapacity (the pods cgroup limit) and PodsWorkingSet give allocatableMemory.available;
	// meaningful only when PodsKnown.
	PodsCapacity, PodsWorkingSet int64
	PodsKnown                    bool
}

// End says how a pod of the world ended.
type End string

// Pod endings.
const (
	// EndNone: the pod runs to the end of the timeline.
	EndNone End = ""
	// EndEvicted: the recorded kubelet or the recorded pressure-agent evicted it (PodInfo.By). Runs that
	// did not evict it keep it (extrapolated): a simulated actor stands in for the recorded one.
	EndEvicted End = "evicted"
	// EndGone: it ended for another reason (deleted, completed, failed); it ends in every run.
	EndGone End = "gone"
)

// PodInfo is one pod of the world.
type PodInfo struct {
	// Candidate describes the pod as the kubelet ranks it; Stats is nil (see World.Cached).
	Candidate rank.Candidate
	// Since is when the pod appears on the node.
	Since time.Time
	// End, Ended and Released say whether, when and how the pod ended in the world: Ended is the
	// eviction (or deletion) time, Released when its memory left the world's totals.
	End      End
	Ended    time.Time
	Released time.Time
	// By is who evicted it in the recording (EndEvicted only): ActorKubelet (also when empty) or
	// ActorAgent (an Eviction API eviction of a pod the agent's ledger on the node names).
	By Actor
	// Message is the recorded kubelet's eviction message (EndEvicted by the kubelet only).
	Message string
	// PDB: a PodDisruptionBudget that allows no disruption protects the pod. The simulated Eviction
	// API refuses the agent's evictions of it (a DELETE is accepted); the kubelet's eviction ignores
	// PodDisruptionBudgets, as the real one does.
	PDB bool
}

// Key is namespace/name.
func (p PodInfo) Key() string { return p.Candidate.Namespace + "/" + p.Candidate.Name }

// Evictor is who evicted the pod in the world (EndEvicted only): By, ActorKubelet when unset.
func (p PodInfo) Evictor() Actor {
	if p.By == "" {
		return ActorKubelet
	}
	return p.By
}

// counted reports whether the world's memory totals at t include the pod.
func (p PodInfo) counted(t time.Time) bool {
	if t.Before(p.Since) {
		return false
	}
	return p.End == EndNone || t.Before(p.Released)
}

// sortPods orders pods by namespace, name and UID: a total order.
func sortPods(ps []PodInfo) {
	sort.Slice(ps, func(i, j int) bool {
		a, b := ps[i].Candidate, ps[j].Candidate
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.UID < b.UID
	})
}

// workingSet returns the pod's memory working set in the stats (0 when not measured, as the kubelet
// counts it).
func workingSet(s signal.PodStats) int64 {
	if s.MemoryWorkingSet == nil {
		return 0
	}
	return int64(*s.MemoryWorkingSet)
}

// withWorkingSet returns a copy of s measured at at with the pod's working set v; the containers'
// working sets are scaled in proportion (the first container takes the rounding).
func withWorkingSet(s signal.PodStats, v int64, at time.Time) signal.PodStats {
	old := workingSet(s)
	out := s
	out.Time = at
	out.MemoryWorkingSet = signal.Uint64(uint64(max(v, 0)))
	out.Containers = make([]signal.ContainerStats, len(s.Containers))
	var rest int64
	for i, c := range s.Containers {
		if c.MemoryWorkingSet != nil && i > 0 && old > 0 {
			cv := int64(float64(*c.MemoryWorkingSet) * float64(v) / float64(old))
			c.MemoryWorkingSet = signal.Uint64(uint64(max(cv, 0)))
			rest += cv
		}
		out.Containers[i] = c
	}
	if len(out.Containers) > 0 && out.Containers[0].MemoryWorkingSet != nil {
		out.Containers[0].MemoryWorkingSet = signal.Uint64(uint64(max(v-rest, 0)))
	}
	return out
}
