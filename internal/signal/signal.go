package signal

import (
	"fmt"
	"sort"
	"time"
)

// Signal names an eviction signal exactly as the kubelet spells it.
type Signal string

// The signals of the kubelet's eviction manager (pkg/kubelet/eviction/api).
const (
	MemoryAvailable            Signal = "memory.available"
	AllocatableMemoryAvailable Signal = "allocatableMemory.available"
	NodeFsAvailable            Signal = "nodefs.available"
	NodeFsInodesFree           Signal = "nodefs.inodesFree"
	ImageFsAvailable           Signal = "imagefs.available"
	ImageFsInodesFree          Signal = "imagefs.inodesFree"
	ContainerFsAvailable       Signal = "containerfs.available"
	ContainerFsInodesFree      Signal = "containerfs.inodesFree"
	PIDAvailable               Signal = "pid.available"
)

// Resource is the resource an eviction reclaims, as the kubelet names it in its messages.
type Resource string

// Resources the kubelet reclaims. Inodes and pids are the kubelet's internal pseudo-resources.
const (
	ResourceMemory           Resource = "memory"
	ResourceEphemeralStorage Resource = "ephemeral-storage"
	ResourceInodes           Resource = "inodes"
	ResourcePIDs             Resource = "pids"
)

// NodeCondition is a node condition type the eviction manager reports.
type NodeCondition string

// Node conditions driven by eviction signals.
const (
	MemoryPressure NodeCondition = "MemoryPressure"
	DiskPressure   NodeCondition = "DiskPressure"
	PIDPressure    NodeCondition = "PIDPressure"
)

type info struct {
	resource  Resource
	condition NodeCondition
	binary    bool // byte quantities print in BinarySI, counts in DecimalSI
}

var signals = map[Signal]info{
	MemoryAvailable:            {ResourceMemory, MemoryPressure, true},
	AllocatableMemoryAvailable: {ResourceMemory, MemoryPressure, true},
	NodeFsAvailable:            {ResourceEphemeralStorage, DiskPressure, true},
	NodeFsInodesFree:           {ResourceInodes, DiskPressure, false},
	ImageFsAvailable:           {ResourceEphemeralStorage, DiskPressure, true},
	ImageFsInodesFree:          {ResourceInodes, DiskPressure, false},
	ContainerFsAvailable:       {ResourceEphemeralStorage, DiskPressure, true},
	ContainerFsInodesFree:      {ResourceInodes, DiskPressure, false},
	PIDAvailable:               {ResourcePIDs, PIDPressure, false},
}

// All returns every signal the kubelet supports, sorted by name.
func All() []Signal {
	out := make([]Signal, 0, len(signals))
	for s := range signals {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Valid reports whether s is a signal the kubelet supports.
func (s Signal) Valid() bool {
	_, ok := signals[s]
	return ok
}

// Resource returns the resource reclaimed when s is under pressure ("" for an unknown signal).
func (s Signal) Resource() Resource { return signals[s].resource }

// Condition returns the node condition s drives ("" for an unknown signal).
func (s Signal) Condition() NodeCondition { return signals[s].condition }

// Bytes reports whether the signal measures bytes (BinarySI) rather than a count (DecimalSI).
func (s Signal) Bytes() bool { return signals[s].binary }

// IsMemory reports whether s is one of the two memory signals, which the kubelet reclaims first.
func (s Signal) IsMemory() bool { return s == MemoryAvailable || s == AllocatableMemoryAvailable }

// Source says where an observation came from.
type Source string

// Sources of observations.
const (
	SourceSummary  Source = "summary"  // the kubelet's Summary API (/stats/summary)
	SourceCgroupfs Source = "cgroupfs" // read directly from the cgroup filesystem
	SourceProcfs   Source = "procfs"   // read directly from /proc
	SourceStatfs   Source = "statfs"   // statfs(2) of a mount point
)

// Observation is what is known about one signal at one moment.
type Observation struct {
	// Available is the amount still available: bytes, inodes or pids.
	Available int64
	// Capacity is the total the percentages of thresholds resolve against.
	Capacity int64
	// Time is when the value was measured (the stats timestamp). The zero time means unknown.
	Time time.Time
	// Source says where the value came from.
	Source Source
}

// String renders the observation for logs and traces.
func (o Observation) String() string {
	return fmt.Sprintf("available=%d capacity=%d at=%s source=%s", o.Available, o.Capacity,
		o.Time.UTC().Format(time.RFC3339Nano), o.Source)
}
