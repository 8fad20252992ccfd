//go:build oracle_k134 || oracle_k135

package main

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// admit offers pod to the admission handler (v1.34, v1.35: no context, and PodAdmitAttributes has no
// Operation before v1.36; every admission is of a new pod).
func admit(h lifecycle.PodAdmitHandler, pod *v1.Pod) lifecycle.PodAdmitResult {
	return h.Admit(&lifecycle.PodAdmitAttributes{Pod: pod})
}
