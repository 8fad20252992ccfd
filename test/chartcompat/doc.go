// Package chartcompat installs the chart with its default values against the kube-apiserver of every
// supported Kubernetes minor (issue 29): the older releases' API servers are built from the modules
// under test/tools/apiserver by hack/build-apiserver.sh, the pinned one is the test cluster's. Each
// install runs on a real control plane (etcd, that kube-apiserver, the pinned controller-manager and
// scheduler) without a node: what is checked is that the API server accepts every object the chart
// renders for it, and that the per-workload avoidance (MutatingAdmissionPolicy v1) is rendered exactly
// where the API server serves it. docs/install.md's compatibility table cites this test.
package chartcompat
