// Package podsoom holds the level-2 test that needs a node of its own: the kubelet's eviction off, so
// that a memory hog drives the pods cgroup (kubepods) into the kernel's OOM killer, and `kubectl
// pressure why` must name the pods cgroup, not the container's own limit. The package node of
// test/e2e keeps the kubelet's eviction on, which would evict the hog first.
package podsoom
