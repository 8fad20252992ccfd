package soak

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// KeptOff reports whether pod waits unscheduled because an avoidance keeps it off node: it is Pending
// and not bound, and every term of its required node affinity excludes node by name (the
// `metadata.name NotIn [node]` field requirement the avoidance policy adds, internal/avoidwebhook).
// Such a pod is the loop breaker at work, not unrest: on a one-node cluster it waits out its owner's
// avoidance, so an episode is calm with it.
func KeptOff(pod *corev1.Pod, node string) bool {
	if pod.Status.Phase != corev1.PodPending || pod.Spec.NodeName != "" {
		return false
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return false
	}
	terms := a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
	if len(terms) == 0 {
		return false
	}
	for _, t := range terms {
		if !slices.ContainsFunc(t.MatchFields, func(r corev1.NodeSelectorRequirement) bool {
			return r.Key == "metadata.name" && r.Operator == corev1.NodeSelectorOpNotIn && slices.Contains(r.Values, node)
		}) {
			return false
		}
	}
	return true
}
