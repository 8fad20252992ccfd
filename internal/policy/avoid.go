package policy

import (
	"sort"
	"time"
)

// The avoidance rules: which owners' new pods can be kept off the node (Avoidable), for how long after
// an eviction (LoopConfig.Cooldown, LoopCooldown after a loop), and which avoidances go first when
// there are more than LoopConfig.MaxEntries.

// Workload is a pod's owner as users look at it (a Deployment rather than its ReplicaSet; internal/owner
// resolves it). The zero Workload means a bare pod.
type Workload struct {
	APIVersion, Kind, Namespace, Name string
	UID                               string
}

// IsZero reports a bare pod.
func (w Workload) IsZero() bool { return w.Kind == "" && w.Name == "" }

// String is kind/namespace/name.
func (w Workload) String() string {
	if w.IsZero() {
		return "<none>"
	}
	return w.Kind + "/" + w.Namespace + "/" + w.Name
}

// Same reports the same workload: by UID when both have one, else by kind, namespace and name.
func (w Workload) Same(o Workload) bool {
	if w.IsZero() || o.IsZero() {
		return false
	}
	if w.UID != "" && o.UID != "" {
		return w.UID == o.UID
	}
	return w.Kind == o.Kind && w.Namespace == o.Namespace && w.Name == o.Name
}

// Avoidable reports whether new pods of w can be kept off a node: a controller that re-creates pods
// anywhere, identified by UID. Bare pods, DaemonSet pods (bound to their node) and static pods (owned
// by the Node) get nothing.
func Avoidable(w Workload) bool {
	return !w.IsZero() && w.UID != "" && w.Kind != "DaemonSet" && w.Kind != "Node"
}

// Avoidance says that new pods of Owner avoid this node until Until (the chart's
// MutatingAdmissionPolicy adds a required node anti-affinity to them).
type Avoidance struct {
	Owner Workload
	Until time.Time
	// Loop reports an escalated avoidance (the owner was detected in an eviction loop).
	Loop bool
}

// Avoid makes new pods of o avoid the node until at least until (an existing longer avoidance is kept;
// loop marks it escalated) and returns the avoidance now in force. Owners that are not Avoidable are
// ignored. Beyond MaxEntries avoidances, those that end first go (ties: by owner UID).
func (h *History) Avoid(o Workload, until time.Time, loop bool) Avoidance {
	if !Avoidable(o) {
		return Avoidance{}
	}
	for i := range h.avoid {
		a := &h.avoid[i]
		if a.Owner.UID != o.UID {
			continue
		}
		if until.After(a.Until) {
			a.Until = until
		}
		a.Loop = a.Loop || loop
		return *a
	}
	a := Avoidance{Owner: o, Until: until, Loop: loop}
	h.avoid = append(h.avoid, a)
	sortAvoidances(h.avoid)
	if n := len(h.avoid) - h.cfg.MaxEntries; n > 0 {
		h.dropSoonest(n)
	}
	return a
}

// AvoidBefore is the avoidance the ladder publishes before it evicts a pod of o at now: for the
// cooldown. It returns the avoidance in force before (for Restore) and whether o is Avoidable (false:
// nothing changed).
func (h *History) AvoidBefore(o Workload, now time.Time) (Avoidance, bool) {
	prev := h.Avoidance(o)
	if !Avoidable(o) {
		return prev, false
	}
	h.Avoid(o, now.Add(h.cfg.Cooldown), false)
	return prev, true
}

// Restore puts the owner's avoidance back as it was (prev.Until zero: none), undoing an Avoid.
func (h *History) Restore(o Workload, prev Avoidance) {
	out := h.avoid[:0:0]
	for _, a := range h.avoid {
		if a.Owner.UID != o.UID {
			out = append(out, a)
		}
	}
	if !prev.Until.IsZero() {
		out = append(out, prev)
		sortAvoidances(out)
	}
	h.avoid = out
}

// Avoidance returns the owner's avoidance (zero Until when there is none).
func (h *History) Avoidance(o Workload) Avoidance {
	for _, a := range h.avoid {
		if a.Owner.UID == o.UID && o.UID != "" {
			return a
		}
	}
	return Avoidance{}
}

// Avoidances returns the avoidances in force at now, by owner UID.
func (h *History) Avoidances(now time.Time) []Avoidance {
	var out []Avoidance
	for _, a := range h.avoid {
		if now.Before(a.Until) {
			out = append(out, a)
		}
	}
	return out
}

// dropSoonest removes the n avoidances that end first (ties: by owner UID).
func (h *History) dropSoonest(n int) {
	byEnd := append([]Avoidance(nil), h.avoid...)
	sort.Slice(byEnd, func(i, j int) bool {
		if !byEnd[i].Until.Equal(byEnd[j].Until) {
			return byEnd[i].Until.Before(byEnd[j].Until)
		}
		return byEnd[i].Owner.UID < byEnd[j].Owner.UID
	})
	drop := map[string]bool{}
	for _, a := range byEnd[:n] {
		drop[a.Owner.UID] = true
	}
	out := h.avoid[:0:0]
	for _, a := range h.avoid {
		if !drop[a.Owner.UID] {
			out = append(out, a)
		}
	}
	h.avoid = out
}

// sortAvoidances sorts by owner UID, a total order: the history holds one avoidance per owner.
func sortAvoidances(as []Avoidance) {
	sort.Slice(as, func(i, j int) bool { return as[i].Owner.UID < as[j].Owner.UID })
}
