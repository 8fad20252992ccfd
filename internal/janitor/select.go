package janitor

import (
	"cmp"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Verb is what to do with a pod.
type Verb string

// Verbs, in output order.
const (
	VerbDelete Verb = "Delete"
	VerbWait   Verb = "Wait" // matches the policy; delete at Action.At
	VerbSkip   Verb = "Skip" // never deleted under this policy; see Action.Skip
)

// SkipReason says why a pod is not deleted. Values are metric label values.
type SkipReason string

// Skip reasons.
const (
	SkipNotTerminal       SkipReason = "not_terminal"
	SkipTerminating       SkipReason = "terminating" // deletionTimestamp set and finalizers pending
	SkipReasonNotSelected SkipReason = "reason_not_selected"
	SkipSucceeded         SkipReason = "succeeded_not_selected"
	SkipNamespace         SkipReason = "namespace"
	SkipLabelSelector     SkipReason = "label_selector"
	SkipPreserved         SkipReason = "preserve_annotation"
	SkipKeptPerOwner      SkipReason = "kept_newest_per_owner"
)

// Policy is what Select deletes. The zero Policy deletes nothing (no reasons selected).
type Policy struct {
	TTL               time.Duration
	KeepPerOwner      int
	Reasons           []string // status.reason values of Failed pods to delete
	DeleteSucceeded   bool     // also Succeeded pods that are bare or owned by a Job
	Namespaces        []string // empty: all
	ExcludeNamespaces []string
	Selector          labels.Selector // nil: everything
}

// Action is Select's decision for one pod.
type Action struct {
	Verb Verb
	Pod  PodInfo
	// EvictedAt is the time the TTL runs from: Pod.EvictedAt, or now when the pod has none yet.
	EvictedAt time.Time
	// At is when the pod becomes due (EvictedAt + TTL); set for Delete and Wait.
	At time.Time
	// Skip is set for VerbSkip.
	Skip SkipReason
	// RecordFirstSeen asks the shell to remember EvictedAt in AnnotationTerminalSince: the pod has
	// no other eviction time.
	RecordFirstSeen bool
}

// Select decides what to do with every pod at time now. It is pure and deterministic: the result
// has one Action per pod, Deletes first in podgc order (evicted first, then oldest eviction time,
// creation time, namespace, name, UID), then Waits by due time, then Skips by namespace and name.
func Select(pods []PodInfo, now time.Time, p Policy) []Action {
	actions := make([]Action, 0, len(pods))
	var matched []int
	for _, pod := range pods {
		a := classify(pod, now, p)
		if a.Verb != VerbSkip {
			matched = append(matched, len(actions))
		}
		actions = append(actions, a)
	}
	keepNewestPerOwner(actions, matched, p.KeepPerOwner)
	slices.SortFunc(actions, compareActions)
	return actions
}

// classify applies every per-pod rule; keep-per-owner needs the whole set and runs after.
func classify(pod PodInfo, now time.Time, p Policy) Action {
	a := Action{Verb: VerbSkip, Pod: pod}
	if reason, skip := filter(&pod, p); skip {
		a.Skip = reason
		return a
	}
	a.EvictedAt = pod.EvictedAt
	if pod.Source == FromNone {
		a.EvictedAt, a.RecordFirstSeen = now, true
	}
	a.At = a.EvictedAt.Add(p.TTL)
	a.Verb = VerbWait
	if !now.Before(a.At) {
		a.Verb = VerbDelete
	}
	return a
}

func filter(pod *PodInfo, p Policy) (SkipReason, bool) {
	switch {
	case pod.Phase != v1.PodFailed && pod.Phase != v1.PodSucceeded:
		return SkipNotTerminal, true
	case pod.Terminating && pod.Finalizers:
		// Whoever owns the finalizers finishes the deletion. A terminal pod marked for deletion
		// without finalizers is selected like any other: its DELETE (grace 0) finishes it.
		return SkipTerminating, true
	case pod.Phase == v1.PodFailed && !slices.Contains(p.Reasons, pod.Reason):
		return SkipReasonNotSelected, true
	case pod.Phase == v1.PodSucceeded && !(p.DeleteSucceeded && (pod.Owner.UID == "" || pod.Owner.Kind == "Job")):
		return SkipSucceeded, true
	case slices.Contains(p.ExcludeNamespaces, pod.Namespace),
		len(p.Namespaces) > 0 && !slices.Contains(p.Namespaces, pod.Namespace):
		return SkipNamespace, true
	case p.Selector != nil && !p.Selector.Matches(labels.Set(pod.Labels)):
		return SkipLabelSelector, true
	case pod.Preserve:
		return SkipPreserved, true
	}
	return "", false
}

// keepNewestPerOwner turns the newest keep matched pods of each owner into Skips. Bare pods have no
// owner to debug and are never kept.
func keepNewestPerOwner(actions []Action, matched []int, keep int) {
	if keep <= 0 {
		return
	}
	byOwner := map[string][]int{}
	var owners []string
	for _, i := range matched {
		uid := actions[i].Pod.Owner.UID
		if uid == "" {
			continue
		}
		if _, ok := byOwner[uid]; !ok {
			owners = append(owners, uid)
		}
		byOwner[uid] = append(byOwner[uid], i)
	}
	for _, uid := range owners {
		group := byOwner[uid]
		slices.SortFunc(group, func(x, y int) int { return newestFirst(&actions[x], &actions[y]) })
		for _, i := range group[:min(keep, len(group))] {
			actions[i].Verb, actions[i].Skip = VerbSkip, SkipKeptPerOwner
		}
	}
}

func newestFirst(a, b *Action) int {
	return cmp.Or(
		b.EvictedAt.Compare(a.EvictedAt),
		b.Pod.CreatedAt.Compare(a.Pod.CreatedAt),
		cmp.Compare(b.Pod.Name, a.Pod.Name),
		cmp.Compare(b.Pod.UID, a.Pod.UID),
	)
}

var verbRank = map[Verb]int{VerbDelete: 0, VerbWait: 1, VerbSkip: 2}

func compareActions(a, b Action) int {
	if c := cmp.Compare(verbRank[a.Verb], verbRank[b.Verb]); c != 0 {
		return c
	}
	switch a.Verb {
	case VerbDelete:
		return cmp.Or(
			cmpBool(isEvicted(&b.Pod), isEvicted(&a.Pod)),
			a.EvictedAt.Compare(b.EvictedAt),
			a.Pod.CreatedAt.Compare(b.Pod.CreatedAt),
			byName(&a.Pod, &b.Pod),
		)
	case VerbWait:
		return cmp.Or(a.At.Compare(b.At), byName(&a.Pod, &b.Pod))
	}
	return byName(&a.Pod, &b.Pod)
}

func byName(a, b *PodInfo) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// isEvicted is podgc's PodIsEvicted: Failed with reason Evicted.
func isEvicted(p *PodInfo) bool { return p.Phase == v1.PodFailed && p.Reason == ReasonEvicted }

// NextDue returns the earliest At among Wait actions.
func NextDue(actions []Action) (time.Time, bool) {
	var next time.Time
	for _, a := range actions {
		if a.Verb == VerbWait && (next.IsZero() || a.At.Before(next)) {
			next = a.At
		}
	}
	return next, !next.IsZero()
}
