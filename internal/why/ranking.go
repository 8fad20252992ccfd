package why

import (
	"fmt"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// Ranking is the memory ranking re-run with the decision core (internal/rank) on the evidence.
type Ranking struct {
	// Basis says which usage figures were ranked.
	Basis string      `json:"basis"`
	Order []RankedPod `json:"order"`
	// Position is the evicted pod's place (1 = first).
	Position int `json:"position"`
	// Why says why the evicted pod goes before the next one (the deciding key and values).
	Why string `json:"why,omitempty"`
}

// RankedPod is one pod in the re-run ranking.
type RankedPod struct {
	Pod       string `json:"pod"`
	QOSClass  string `json:"qosClass"`
	Priority  int32  `json:"priority"`
	Usage     string `json:"usage"`
	Request   string `json:"request"`
	DecidedBy string `json:"decidedBy,omitempty"`
	Evicted   bool   `json:"evicted,omitempty"`
}

// victimCandidate is the evicted pod with its usage from the eviction message; ok is false when the
// message gives no usage or the pod's spec is unknown.
func victimCandidate(v *Verdict, ev Evidence) (rank.Candidate, bool) {
	d := v.Eviction
	var c rank.Candidate
	switch {
	case ev.Victim != nil:
		c = *ev.Victim
	case ev.Janitor != nil:
		j := ev.Janitor
		c = rank.Candidate{UID: j.UID, Namespace: j.Namespace, Name: j.Pod, QOSClass: j.QOS}
		if q, ok := quantity(j.Requests["memory"]); ok {
			c.MemoryRequest = q
		}
		d.Missing = append(d.Missing, "the deleted pod's priority (the janitor's record has none: 0 assumed)")
	default:
		d.Missing = append(d.Missing, "the evicted pod's spec (requests, priority): not read, and no janitor record names it")
		return c, false
	}
	var sum uint64
	stats := &signal.PodStats{UID: c.UID, Namespace: c.Namespace, Name: c.Name}
	for _, cu := range d.Containers {
		u, ok := quantity(cu.Usage)
		if !ok {
			continue
		}
		uu := uint64(u)
		sum += uu
		stats.Containers = append(stats.Containers, signal.ContainerStats{Name: cu.Name, MemoryWorkingSet: &uu})
	}
	if len(stats.Containers) == 0 {
		d.Missing = append(d.Missing, "the evicted pod's usage at eviction (the message names no container above its request)")
		return c, false
	}
	stats.MemoryWorkingSet = &sum
	c.Stats = stats
	return c, true
}

// rerank runs the kubelet's memory ranking on the evicted pod (usage from the message) and the pods
// on the node now.
func rerank(v *Verdict, ev Evidence) *Ranking {
	d := v.Eviction
	if d.Resource != string(signal.ResourceMemory) {
		d.Missing = append(d.Missing, fmt.Sprintf("a re-run of the ranking for %s: only memory evictions are re-ranked", orDash(d.Resource)))
		return nil
	}
	victim, ok := victimCandidate(v, ev)
	if !ok {
		return nil
	}
	cands := []rank.Candidate{victim}
	for _, n := range ev.Neighbours {
		if n.UID != victim.UID {
			cands = append(cands, n)
		}
	}
	d.Missing = append(d.Missing, "the other pods' usage at the eviction (no API keeps it; the kubelet logs it in \"pods ranked for eviction\"): "+
		"the re-run uses their usage now, and pods that ended since are not in it")
	r := rank.Rank(signal.MemoryAvailable, signal.FilesystemLayout{}, cands)
	out := &Ranking{Basis: "evicted pod: usage from the eviction message; other pods: usage now (kubelet Summary)"}
	for i, e := range r.Entries {
		rp := RankedPod{Pod: e.Candidate.Namespace + "/" + e.Candidate.Name, QOSClass: e.Candidate.QOSClass,
			Priority: e.Values.Priority, Usage: usageText(e.Values), Request: qty(e.Values.Request), Evicted: e.Candidate.UID == victim.UID}
		if i < len(r.Steps) {
			rp.DecidedBy = string(r.Steps[i].Key)
		}
		if rp.Evicted {
			out.Position = i + 1
			if i < len(r.Steps) {
				out.Why = fmt.Sprintf("before %s by %s (%s vs %s)", r.Entries[i+1].Candidate.Namespace+"/"+r.Entries[i+1].Candidate.Name,
					r.Steps[i].Key, r.Steps[i].Before, r.Steps[i].After)
			}
		}
		out.Order = append(out.Order, rp)
	}
	if out.Position > 1 {
		v.note(fmt.Sprintf("re-ranked with the other pods' usage now, the evicted pod comes %d: their usage at the eviction differed "+
			"(or the pods ahead of it were not running then)", out.Position))
	}
	return out
}

func usageText(v rank.Values) string {
	if !v.HasStats {
		return "no stats"
	}
	return qty(v.Usage)
}

// prevention lists what would have kept the pod from being the one evicted.
func prevention(v *Verdict, ev Evidence) []string {
	d := v.Eviction
	var out []string
	victim, ok := victimCandidate(&Verdict{Eviction: &Eviction{Containers: d.Containers}}, ev)
	if ok && d.Resource == string(signal.ResourceMemory) {
		use := int64(*victim.Stats.MemoryWorkingSet)
		if use > victim.MemoryRequest {
			out = append(out,
				fmt.Sprintf("a memory request of at least %s (it used %s against a request of %s): the kubelet evicts pods above their request before any pod within it",
					qty(use), qty(use), qty(victim.MemoryRequest)),
				fmt.Sprintf("a higher priority (it had %d): among pods above their request the lowest priority goes first", victim.Priority))
		}
	}
	if !hasMemoryLimit(ev) {
		out = append(out, "a memory limit near its working set: the pod could not have grown into node pressure (past the limit it is OOM-killed in its own cgroup instead)")
	}
	if a := d.Allocatable; a != nil && d.Resource == string(signal.ResourceMemory) {
		out = append(out, fmt.Sprintf("more memory for pods: allocatable is %s = capacity %s − kube-reserved %s − system-reserved %s − hard eviction %s; "+
			"a smaller reservation or a larger node moves the threshold", a.Allocatable, a.Capacity, a.KubeReserved, a.SystemReserved, a.HardEviction))
	}
	return out
}

func hasMemoryLimit(ev Evidence) bool {
	if ev.Pod != nil {
		for _, c := range ev.Pod.Containers {
			if c.MemoryLimit == 0 {
				return false
			}
		}
		return len(ev.Pod.Containers) > 0
	}
	if ev.Janitor != nil {
		_, ok := ev.Janitor.Limits["memory"]
		return ok
	}
	return false
}
