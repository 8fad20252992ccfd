//go:build tools

// Package tools pins the kube-apiserver of Kubernetes v1.36.3 that test/chartcompat installs the chart against
// (hack/build-apiserver.sh builds it).
package tools

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
