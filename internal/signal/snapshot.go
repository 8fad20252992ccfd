package signal

import (
	"sort"
	"time"
)

// Snapshot is everything observed about a node at one moment: one observation per signal that could be
// observed, per-pod usage keyed by pod UID, and pressure-stall information.
type Snapshot struct {
	// Observations holds one entry per observed signal; a signal without an entry was not observed.
	Observations map[Signal]Observation
	// Pods holds per-pod usage keyed by pod UID; a pod without an entry has no stats.
	Pods map[string]PodStats
	// PSI holds pressure-stall information, sorted by Scope then Resource.
	PSI []Pressure
	// Filesystems describes the node's disk layout as observed.
	Filesystems FilesystemLayout
	// NodeMemory and PodsMemory are the reclaim fields of the node's memory.stat (the root cgroup, with
	// the node's workingset counters) and of the pods cgroup's; nil when not read (the kubelet's Summary
	// API has neither).
	NodeMemory, PodsMemory *MemoryStat
}

// Signals returns the observed signals sorted by name.
func (s Snapshot) Signals() []Signal {
	out := make([]Signal, 0, len(s.Observations))
	for sig := range s.Observations {
		out = append(out, sig)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// FilesystemLayout says whether images and container writable layers live on filesystems of their own.
type FilesystemLayout struct {
	// DedicatedImageFs is true when the runtime's image filesystem is not the kubelet's root filesystem.
	DedicatedImageFs bool
	// SplitContainerFs is true when writable layers live on a different filesystem than images.
	SplitContainerFs bool
}

// PodStats is the usage of one pod. Nil pointers mean "not measured", never zero.
type PodStats struct {
	UID       string
	Namespace string
	Name      string
	// Time is when the pod's stats were measured.
	Time time.Time
	// MemoryWorkingSet is the pod cgroup's working set in bytes (usage - inactive_file).
	MemoryWorkingSet *uint64
	// Memory is the reclaim part of the pod cgroup's memory.stat; nil when not read.
	Memory *MemoryStat
	// ProcessCount is the number of processes in the pod (what the kubelet ranks by for pid.available).
	ProcessCount *uint64
	// ThreadCount is the number of threads (tasks) in the pod: what evicting it frees of pid.available,
	// which counts threads. Nil when not measured (the kubelet's Summary API has no such field).
	ThreadCount *uint64
	// EphemeralStorageUsed and EphemeralStorageInodes are the pod's total ephemeral-storage usage
	// (container rootfs + logs + ephemeral volumes + pod logs + etc-hosts) as the kubelet computes it.
	EphemeralStorageUsed   *uint64
	EphemeralStorageInodes *uint64
	Containers             []ContainerStats
	Volumes                []VolumeStats
}

// ContainerStats is the usage of one container of a pod.
type ContainerStats struct {
	Name             string
	MemoryWorkingSet *uint64
	RootfsUsed       *uint64
	RootfsInodes     *uint64
	LogsUsed         *uint64
	LogsInodes       *uint64
}

// VolumeStats is the usage of one volume of a pod.
type VolumeStats struct {
	Name       string
	UsedBytes  *uint64
	InodesUsed *uint64
}

// Pressure is one PSI record (see https://docs.kernel.org/accounting/psi.html).
type Pressure struct {
	// Scope is "node" for /proc/pressure or a cgroup path such as "kubepods".
	Scope string
	// Resource is "memory", "cpu" or "io".
	Resource string
	Some     PressureLine
	// Full is absent for the node-wide cpu resource on old kernels.
	Full *PressureLine
	Time time.Time
}

// PressureLine is the "some" or "full" line of a PSI file.
type PressureLine struct {
	Avg10, Avg60, Avg300 float64
	// Total is the cumulative stall time in microseconds.
	Total uint64
}

// Uint64 returns a pointer to v, for building PodStats literals.
func Uint64(v uint64) *uint64 { return &v }
