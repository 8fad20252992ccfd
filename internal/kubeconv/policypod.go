package kubeconv

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
)

// PolicyPod converts a pod listed as bound to the node, in any phase, into the policy's pod for
// policy.Read: its Candidate, its deletion timestamp (zero when not terminating) and whether its phase
// is terminal. policy.NewInput decides which of the listed pods the policy sees.
func PolicyPod(pod *corev1.Pod, stats map[string]signal.PodStats) policy.Pod {
	p := policy.Pod{Candidate: Candidate(pod, stats), Terminal: Terminal(pod)}
	if pod.DeletionTimestamp != nil {
		p.DeletionTimestamp = pod.DeletionTimestamp.UTC()
	}
	return p
}

// Terminal reports whether the pod's phase is Failed or Succeeded: the kubelet no longer counts it
// among the active pods.
func Terminal(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}
