//go:build !oracle_k134 && !oracle_k135 && !oracle_k136

package main

import (
	"context"

	v1 "k8s.io/api/core/v1"
	"k8s.io/kubernetes/pkg/kubelet/lifecycle"
)

// admit offers pod to the admission handler as a new pod (v1.37: Admit takes a context).
func admit(h lifecycle.PodAdmitHandler, pod *v1.Pod) lifecycle.PodAdmitResult {
	return h.Admit(context.Background(), &lifecycle.PodAdmitAttributes{Pod: pod, Operation: lifecycle.AddOperation})
}
