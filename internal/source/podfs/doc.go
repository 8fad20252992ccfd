// Package podfs measures each pod's local disk usage on the node itself, the way the kubelet accounts
// it for disk-pressure ranking (kubelet-eviction-spec §3.5): the pod's local volumes (emptyDir on the
// disk medium, configMap and gitRepo volumes) under <kubelet root dir>/pods/<uid>/volumes/<plugin>/<name>,
// and its containers' logs under <pod logs dir>/<namespace>_<name>_<uid>/<container>.
//
// Each directory is walked like the kubelet's fs.DiskUsage: bytes are the allocated blocks (st_blocks ×
// 512) and inodes the distinct inodes (hard links counted once), the directory itself included. A walk
// does not cross into another filesystem (a memory-medium emptyDir is a tmpfs mount and frees no disk).
//
// The walk is bounded (Limits, walk.go): it reads directories in batches, remembers only inodes with
// more than one hard link, and stops a pod's walk after MaxEntries entries, MaxDuration or MaxDepth
// directories; the pod's usage is then a lower bound (Usage.Partial, Reader.OnPartial).
//
// Container writable layers (rootfs) are not measured: they live in the container runtime's
// snapshotter, whose layout this package does not read. Their fields stay nil: absent, not zero.
//
// Absent is not zero: a pod whose directories cannot be read has no entry, and a part that was not
// measured is nil. Reader caches its result for MinInterval, so a burst of syncs (memory wake-ups)
// walks the disk once; every value carries the time it was measured.
package podfs
