package why

import (
	"fmt"
	"sort"
	"time"
)

// Cause is what ended the pod or its container.
type Cause string

// Causes.
const (
	CauseKubeletEviction  Cause = "EvictedByKubelet"
	CauseKubeletRejection Cause = "RejectedByKubelet"
	CauseAgentEviction    Cause = "EvictedByPressureAgent"
	CauseOOMOwnLimit      Cause = "OOMKilledOwnLimit"
	CauseOOMKernel        Cause = "OOMKilledByKernel"
	CausePreempted        Cause = "Preempted"
	CauseEvictionAPI      Cause = "EvictedThroughEvictionAPI"
	CauseDeleted          Cause = "Deleted"
	CauseLivenessProbe    Cause = "LivenessProbeFailed"
	CauseNodeShutdown     Cause = "NodeShutdown"
	CauseExitedOnItsOwn   Cause = "ExitedOnItsOwn"
	CauseUnknown          Cause = "Unknown"
)

// Confidence grades a verdict: high when a component said so itself (its Event, status or ledger),
// medium when it is inferred from several facts, low when from one indirect fact.
type Confidence string

// Confidences.
const (
	High   Confidence = "high"
	Medium Confidence = "medium"
	Low    Confidence = "low"
)

// Fact is one piece of evidence: where it was read and what it says.
type Fact struct {
	Source string `json:"source"`
	Detail string `json:"detail"`
}

// Verdict is the answer for one pod.
type Verdict struct {
	Namespace  string     `json:"namespace"`
	Pod        string     `json:"pod"`
	UID        string     `json:"uid,omitempty"`
	Node       string     `json:"node,omitempty"`
	PodGone    bool       `json:"podGone"`
	Cause      Cause      `json:"cause"`
	Confidence Confidence `json:"confidence"`
	Summary    string     `json:"summary"`
	// At is when it happened, when known.
	At       *time.Time `json:"at,omitempty"`
	Evidence []Fact     `json:"evidence"`
	// Eviction details evictions (kubelet, agent, janitor evidence).
	Eviction *Eviction `json:"eviction,omitempty"`
	Notes    []string  `json:"notes,omitempty"`
	// Checked lists what was looked at (always filled; the text output shows it for unknown verdicts).
	Checked  []string `json:"checked"`
	Problems []string `json:"problems,omitempty"`
}

// Decide returns the verdict for the evidence. Rules are tried in a fixed order, the most specific
// (a component's own statement) first; the first that matches decides, later matches become notes.
func Decide(ev Evidence) Verdict {
	v := Verdict{Namespace: ev.Namespace, Cause: CauseUnknown, Confidence: Low, Checked: ev.Checked, Problems: ev.Problems}
	identify(&v, ev)
	for _, r := range rules {
		if r(&v, ev) {
			break
		}
	}
	if v.Cause == CauseUnknown && v.Summary == "" {
		v.Summary = "no evidence names a cause: see what was checked"
		if _, ok := latestTermination(ev.Pod); ev.Pod != nil && !ok && ev.Pod.DeletionTimestamp == nil {
			v.Summary = fmt.Sprintf("nothing killed it: the pod is %s and none of its containers has terminated", orDash(ev.Pod.Phase))
		}
		if v.PodGone {
			v.Summary = "the pod is gone and no Event, janitor record or ledger entry about it remains: see what was checked"
		}
	}
	if v.Evidence == nil {
		v.Evidence = []Fact{}
	}
	if v.Checked == nil {
		v.Checked = []string{}
	}
	return v
}

// rules in order: evictions and deletions end the pod, so they come before container-level causes.
var rules = []func(*Verdict, Evidence) bool{
	agentEviction, kubeletEviction, nodeShutdown, preempted, apiEviction,
	containerDeath, deleted,
}

// identify fills the pod's names from whatever evidence has them.
func identify(v *Verdict, ev Evidence) {
	switch {
	case ev.Pod != nil:
		v.Pod, v.UID, v.Node, v.Namespace = ev.Pod.Name, ev.Pod.UID, ev.Pod.Node, ev.Pod.Namespace
	case ev.Janitor != nil:
		v.PodGone = true
		v.Pod, v.UID, v.Node = ev.Janitor.Pod, ev.Janitor.UID, ev.Janitor.Node
	default:
		v.PodGone = true
		v.Pod = ev.Query
		for _, e := range ev.Events {
			if e.Kind == "Pod" {
				v.Pod, v.UID = e.Object, e.ObjectUID
				if v.Node == "" {
					v.Node = e.Host
				}
			}
		}
	}
	if v.Node == "" && ev.Node != nil {
		v.Node = ev.Node.Name
	}
}

// find returns the pod events matching pred, newest first (then by name: a total order).
func find(evs []Event, pred func(Event) bool) []Event {
	var out []Event
	for _, e := range evs {
		if pred(e) {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Last.Equal(out[j].Last) {
			return out[i].Last.After(out[j].Last)
		}
		return out[i].Name < out[j].Name
	})
	return out
}

func (v *Verdict) add(source, detail string) {
	v.Evidence = append(v.Evidence, Fact{Source: source, Detail: detail})
}

func (v *Verdict) set(c Cause, conf Confidence, summary string, at time.Time) {
	v.Cause, v.Confidence, v.Summary = c, conf, summary
	if !at.IsZero() {
		t := at.UTC()
		v.At = &t
	}
}

func (v *Verdict) note(s string) { v.Notes = append(v.Notes, s) }

// condition returns the pod condition of type t with status True.
func condition(p *Pod, t string) (Condition, bool) {
	if p == nil {
		return Condition{}, false
	}
	for _, c := range p.Conditions {
		if c.Type == t && c.Status == "True" {
			return c, true
		}
	}
	return Condition{}, false
}
