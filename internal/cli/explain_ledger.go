package cli

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/owner"
	"github.com/kube-pressure/pressure/internal/policy"
)

// foreseeAvoidance returns explain's foresight of what evicting a pod of the node does to its
// workload's avoidance of the node, by the agent's own ledger rules (policy.History.AvoidanceAfter on the
// node's ledger annotation); nil when the annotation cannot be read.
func foreseeAvoidance(node *corev1.Node, pods []corev1.Pod, p policy.LoopConfig) func(uid string, at time.Time) string {
	l, err := nodeLedger(node, p)
	if err != nil {
		return nil
	}
	byUID := make(map[string]*corev1.Pod, len(pods))
	for i := range pods {
		byUID[string(pods[i].UID)] = &pods[i]
	}
	return func(uid string, at time.Time) string {
		pod, ok := byUID[uid]
		if !ok {
			return ""
		}
		o := owner.ControllerOf(pod)
		if !policy.Avoidable(o) {
			return ""
		}
		before := l.Avoidance(o)
		a, loop, isLoop := l.AvoidanceAfter(policy.HistoryEntry{UID: string(pod.UID), Namespace: pod.Namespace, Name: pod.Name, Owner: o,
			At: at, Created: pod.CreationTimestamp.Time})
		return avoidanceWords(o, before, a, loop, isLoop, at)
	}
}

// avoidanceWords says what an eviction does to the owner's avoidance.
func avoidanceWords(o policy.Workload, before, after policy.Avoidance, loop policy.EvictionLoop, isLoop bool, at time.Time) string {
	until := after.Until.UTC().Format(time.RFC3339)
	var s string
	switch {
	case before.Until.After(at):
		s = fmt.Sprintf("%s already avoids the node until %s", o, before.Until.UTC().Format(time.RFC3339))
		if after.Until.After(before.Until) {
			s += "; the eviction extends it to " + until
		}
	default:
		s = fmt.Sprintf("the agent publishes an avoidance of the node for %s before the eviction, until %s", o, until)
	}
	if isLoop {
		s += fmt.Sprintf("; an eviction loop (%d evictions of %s here within the window, this pod created after the "+
			"previous one): the avoidance is escalated", loop.Evictions, o)
	}
	return s
}
