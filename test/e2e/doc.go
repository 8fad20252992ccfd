// Package e2e holds end-to-end tests on a real single-node cluster (test/cluster level 2:
// kube-apiserver, etcd, controller manager, scheduler, containerd and a kubelet on this
// machine). TestMain starts one node for the whole package; see node_test.go for its kubelet
// configuration. The tests need root, the cgroup v1 memory controller and the built
// Kubernetes binaries; without them they skip with the reason, or fail when CI=true.
package e2e
