//go:build oracle_k136

package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// admit offers pod to the admission handler as a new pod (v1.36: Operation, no context).
func admit(h lifecycle.PodAdmitHandler, pod *v1.Pod) lifecycle.PodAdmitResult {
	return h.Admit(&lifecycle.PodAdmitAttributes{Pod: pod, Operation: lifecycle.AddOperation})
}
