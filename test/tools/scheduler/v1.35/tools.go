//go:build tools

// Package tools pins the kube-scheduler of Kubernetes v1.35.4 that test/avoidwebhook schedules pods with
// (hack/build-apiserver.sh kube-scheduler builds it).
package tools

import _ "k8s.io/kubernetes/cmd/kube-scheduler"
