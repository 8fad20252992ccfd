// Package rank orders the active pods of a node for eviction exactly as the kubelet's eviction manager
// (v1.34 to v1.37: ranking is the same in each) does, and says why.
//
// Candidate is our own description of a pod (built from a v1.Pod and its stats by internal/kubeconv):
// everything ranking and the decision core need, so that nothing below kubeconv sees a v1.Pod.
//
// Rank(signal, layout, candidates) applies the kubelet's comparator chain for the signal:
//
//   - memory.available, allocatableMemory.available: usage > request first, then lower priority, then
//     larger (working set − memory request);
//   - pid.available: lower priority, then larger process count;
//   - disk signals: disk usage > request first, then lower priority, then larger (disk usage −
//     ephemeral-storage request). Which parts of a pod's disk usage count (container rootfs, logs,
//     local volumes) depends on the signal and the filesystem layout. Two kubelet quirks are kept: for
//     inode signals any usage "exceeds" (there is no inode request) and the ephemeral-storage request in
//     bytes is still subtracted from the inode count; on a split image/container filesystem imagefs
//     ranking measures nothing, so it degenerates to priority then −request.
//
// In every stats-based key a pod without stats ranks before a pod with stats; two stat-less pods tie on
// that key. The ranking records, for every adjacent pair, the key that decided it and the compared
// values, so explanations need no further computation.
//
// Determinism (our deliberate choice): the kubelet sorts with sort.Sort, which is unstable beyond 12
// items, so pods that tie on every kubelet key may come out in any order there. We make the order total
// with a final tie-breaker: namespace/name, then UID, then position in the input. For ties this may
// differ from what a given kubelet run would do; it never differs on any kubelet key.
//
// ReferenceOrder is a deliberately naive second implementation (explicit key tuples, selection by
// minimum) used by a differential test. The package is pure: no I/O, clock, logging or goroutines.
package rank
