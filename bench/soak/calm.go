package soak

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Unrest names why a node and an episode's pods are not calm yet, or returns "" when they are calm:
//   - the node has a MemoryPressure, DiskPressure or PIDPressure condition that is not False;
//   - a pod of the episode is Pending, unless an avoidance keeps it off the node (KeptOff);
//   - a pod of the episode is terminating: it has a deletion timestamp and has not ended. An eviction
//     is not over until its pod is gone; until then the memory it holds is not free, the agent counts
//     it in flight, and a signal inside its minimum-reclaim band keeps the agent's pressure (and its
//     evicting taint) on. The kubelet can take most of a minute to stop a pod after an API server
//     outage (soak episode 48 of seed 1796443068: 51 s), which is not the loop breaker's doing.
//
// Pods are judged in their order, so the reason names the first that is not calm.
func Unrest(node *corev1.Node, pods []corev1.Pod) string {
	for _, cond := range node.Status.Conditions {
		switch cond.Type {
		case corev1.NodeMemoryPressure, corev1.NodeDiskPressure, corev1.NodePIDPressure:
			if cond.Status != corev1.ConditionFalse {
				return fmt.Sprintf("node %s has %s=%s", node.Name, cond.Type, cond.Status)
			}
		}
	}
	for i := range pods {
		p := &pods[i]
		ended := p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
		switch {
		case p.DeletionTimestamp != nil && !ended:
			return fmt.Sprintf("pod %s/%s is terminating (deleted at %s)", p.Namespace, p.Name, p.DeletionTimestamp.UTC().Format("15:04:05"))
		case p.Status.Phase == corev1.PodPending && !KeptOff(p, node.Name):
			return fmt.Sprintf("pod %s/%s is pending", p.Namespace, p.Name)
		}
	}
	return ""
}
