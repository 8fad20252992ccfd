//go:build !oracle_k137

package main

import "k8s.io/kubernetes/pkg/kubelet/lifecycle"

// admit calls the admission handler, which takes no context before v1.37.
func admit(h lifecycle.PodAdmitHandler, attrs *lifecycle.PodAdmitAttributes) lifecycle.PodAdmitResult {
	return h.Admit(attrs)
}
