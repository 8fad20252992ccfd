package explain

import (
	"fmt"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

// AgentReclaim is how policy reclaim-aware sees one memory signal: the kubelet's working-set answer
// next to the non-reclaimable estimate, the stall signals and what the agent acts on. Amounts are exact
// bytes; Known false means no estimate (Why), and the agent acts on the working set as policy pressure.
type AgentReclaim struct {
	Signal string `json:"signal"`
	Known  bool   `json:"known"`
	Why    string `json:"why,omitempty"`
	// WorkingSet is the available amount by the kubelet's working set (usage − inactive_file);
	// NonReclaimable by the estimate (capacity − (usage − reclaimable)); ActingOn what the agent uses.
	WorkingSet     string `json:"workingSetAvailable"`
	NonReclaimable string `json:"nonReclaimableAvailable"`
	ActingOn       string `json:"actingOn"`
	// File, Dirty, Writeback, Refaulted and Reclaimable are the estimate's parts (Known only).
	File        string `json:"file,omitempty"`
	Dirty       string `json:"dirty,omitempty"`
	Writeback   string `json:"writeback,omitempty"`
	Refaulted   string `json:"refaulted,omitempty"`
	Reclaimable string `json:"reclaimable,omitempty"`
	// PSI is the memory PSI read ("node some 0.40% full 0.00%"; empty when none); Confirmed says whether
	// the stall signals confirm the pressure.
	PSI       string `json:"psi,omitempty"`
	Confirmed bool   `json:"confirmed"`
	// Backstop: the working set is close to the kubelet's own threshold, so the agent acts on it.
	Backstop bool `json:"backstop"`

	sig                 signal.Signal
	ws, nonRec, acting  int64
	reclaimable, inactv int64
}

// AgentReclaimAction is one reclaim of the reclaim rung: Planned true when the agent would carry it out
// instead of evicting, false when the rung is off and it would have avoided the eviction.
type AgentReclaimAction struct {
	Signal string `json:"signal"`
	// Target is the pod (namespace/name) or "the pods cgroup"; UID is the pod's ("" for the pods cgroup).
	Target string `json:"target"`
	UID    string `json:"uid,omitempty"`
	// Bytes is what would be asked of the kernel; Reclaimable the target's reclaimable file pages.
	Bytes       string `json:"bytes"`
	Reclaimable string `json:"reclaimable"`
	Planned     bool   `json:"planned"`
	// Says is the sentence the text output prints.
	Says string `json:"says"`
}

// agentReclaimActions converts the plan's reclaim requests (planned first, then the avoidable ones).
func agentReclaimActions(plan policy.Plan) []AgentReclaimAction {
	var out []AgentReclaimAction
	add := func(q policy.ReclaimRequest, planned bool) {
		a := AgentReclaimAction{Signal: string(q.Signal), Target: q.Target(), UID: q.Pod.UID, Bytes: exact(q.Bytes, unitBytes),
			Reclaimable: exact(q.Reclaimable, unitBytes), Planned: planned}
		if planned {
			a.Says = fmt.Sprintf("would reclaim %s of file pages from %s instead of evicting (%s)", human(q.Bytes, unitBytes),
				q.Target(), q.Signal)
		} else {
			a.Says = fmt.Sprintf("reclaiming %s of file pages from %s would have avoided this eviction (%s); the reclaim rung "+
				"is off (reclaim.action.enabled, and the chart's writable cgroup option)", human(q.Bytes, unitBytes), q.Target(), q.Signal)
		}
		out = append(out, a)
	}
	for _, q := range plan.Reclaims {
		add(q, true)
	}
	for _, q := range plan.ReclaimAvoidable {
		add(q, false)
	}
	return out
}

// agentReclaim converts the plan's reclaim views.
func agentReclaim(views []policy.ReclaimView) []AgentReclaim {
	var out []AgentReclaim
	for _, v := range views {
		r := AgentReclaim{Signal: string(v.Signal), Known: v.Known, Why: v.Why, WorkingSet: exact(v.WorkingSet, unitBytes),
			NonReclaimable: exact(v.NonReclaimable, unitBytes), ActingOn: exact(v.Effective, unitBytes), Confirmed: v.Confirmed,
			Backstop: v.Backstop, sig: v.Signal, ws: v.WorkingSet, nonRec: v.NonReclaimable, acting: v.Effective}
		if v.Known {
			e := v.Estimate
			r.File, r.Dirty, r.Writeback = exact(e.File, unitBytes), exact(e.Dirty, unitBytes), exact(e.Writeback, unitBytes)
			r.Refaulted, r.Reclaimable = exact(e.Refaulted, unitBytes), exact(e.Reclaimable, unitBytes)
			r.reclaimable, r.inactv = e.Reclaimable, e.Inactive
		}
		if v.PSIKnown {
			r.PSI = fmt.Sprintf("%s some %.2f%% full %.2f%%", v.PSIScope, v.SomeAvg10, v.FullAvg10)
		}
		out = append(out, r)
	}
	return out
}

// reclaimObservations returns the observations with each memory signal at what policy reclaim-aware
// acts on (obs itself without views).
func reclaimObservations(obs map[signal.Signal]signal.Observation, views []policy.ReclaimView) map[signal.Signal]signal.Observation {
	if len(views) == 0 {
		return obs
	}
	out := make(map[signal.Signal]signal.Observation, len(obs))
	for s, o := range obs {
		out[s] = o
	}
	for _, v := range views {
		o := out[v.Signal]
		o.Available = v.Effective
		out[v.Signal] = o
	}
	return out
}

// reclaimDifferences says, per memory signal, where the estimate changes the answer: the working set
// meets the agent's threshold and the estimate does not (cache: no eviction), or the other way round.
func reclaimDifferences(rs []AgentReclaim, ts []AgentThreshold) []string {
	var out []string
	for _, r := range rs {
		if !r.Known {
			out = append(out, fmt.Sprintf("policy reclaim-aware: no reclaim estimate for %s (%s): pressure-agent acts on the working set, as policy pressure", r.Signal, r.Why))
			continue
		}
		thr, ok := hardThreshold(ts, r.sig)
		if !ok {
			continue
		}
		wsMet, actMet := r.ws < thr, r.acting < thr
		parts := fmt.Sprintf("%s is %s by the kubelet's working set and %s once the %s the kernel can reclaim (clean page cache, not refaulting) is counted",
			r.Signal, human(r.ws, unitBytes), human(r.nonRec, unitBytes), human(r.reclaimable, unitBytes))
		switch {
		case wsMet && !actMet:
			out = append(out, "policy reclaim-aware: "+parts+"; the stall signals do not confirm a shortage: pressure-agent does not evict for it")
		case !wsMet && actMet:
			out = append(out, "policy reclaim-aware: "+parts+"; dirty, written-back or refaulting cache is not reclaimable: pressure-agent evicts earlier than on the working set")
		case wsMet && actMet && r.Confirmed:
			out = append(out, "policy reclaim-aware: "+parts+"; PSI and the refault counters confirm the pressure: pressure-agent acts on the lower, "+human(r.acting, unitBytes))
		case wsMet && actMet && r.Backstop:
			out = append(out, "policy reclaim-aware: "+parts+"; the working set is close to the kubelet's own threshold, which evicts whatever the estimate says: "+
				"pressure-agent acts first, on the working set, ranking by non-reclaimable usage")
		}
	}
	return out
}

// hardThreshold returns the agent's resolved hard threshold of sig (the highest when there are several).
func hardThreshold(ts []AgentThreshold, sig signal.Signal) (int64, bool) {
	var best int64
	found := false
	for _, t := range ts {
		if t.sig == sig && t.Hard && t.Known && (!found || t.resolvedV > best) {
			best, found = t.resolvedV, true
		}
	}
	return best, found
}

// reclaimActions prints the reclaim rung's sentences.
func (p *printer) reclaimActions(as []AgentReclaimAction) {
	if len(as) == 0 {
		return
	}
	p.printf("\n")
	for _, a := range as {
		p.prose("  ", "", a.Says)
	}
}

func (p *printer) reclaim(rs []AgentReclaim) {
	if len(rs) == 0 {
		return
	}
	p.printf("\n")
	t := [][]string{{"MEMORY SIGNAL", "WORKING SET", "RECLAIMABLE", "NON-RECLAIMABLE", "PSI", "CONFIRMED", "ACTING ON"}}
	for _, r := range rs {
		row := []string{r.Signal, human(r.ws, unitBytes), "unknown", "-", dash(r.PSI), "no", human(r.acting, unitBytes)}
		if r.Known {
			row[2], row[3] = human(r.reclaimable, unitBytes), human(r.nonRec, unitBytes)
		}
		if r.Confirmed {
			row[5] = "YES"
		}
		t = append(t, row)
	}
	p.table(t)
}
