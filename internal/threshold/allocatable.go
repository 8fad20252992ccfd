package threshold

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
)

// ErrInvalidAllocatable: reservations exceed the capacity of a resource (the kubelet refuses to start).
var ErrInvalidAllocatable = errors.New("invalid node allocatable configuration")

// Resource names of node capacity understood by Allocatable. Hugepages are "hugepages-<size>".
const (
	ResourceCPU              = "cpu"
	ResourceMemory           = "memory"
	ResourceEphemeralStorage = "ephemeral-storage"
	ResourcePID              = "pid"
	hugepagesPrefix          = "hugepages-"
)

// ResourceAllocation is every step of the allocatable arithmetic for one resource, in the
// resource's unit: bytes, millicores for cpu, a count for pid.
type ResourceAllocation struct {
	Resource       string
	Capacity       int64
	KubeReserved   int64
	SystemReserved int64
	// HardEviction is the hard-eviction reservation: memory.available (memory) and
	// nodefs.available (ephemeral-storage) hard thresholds resolved against capacity.
	HardEviction int64
	// HugePages is the sum of hugepages-* capacity, subtracted from memory only.
	HugePages int64
	// Allocatable = Capacity − SystemReserved − KubeReserved − HardEviction − HugePages, floored at 0
	// (what the node reports as status.allocatable).
	Allocatable int64
	// PodsCgroupLimit is the pods cgroup limit: Capacity − KubeReserved − SystemReserved floored
	// at 0 when "pods" is enforced, else Capacity. The hard-eviction reservation and hugepages are
	// not subtracted (kubelet v1.36.3 getNodeAllocatableAbsoluteImpl).
	PodsCgroupLimit int64
}

// Format prints an amount of this resource in the kubelet's canonical form: cpu in millicores
// ("14500m" → "14500m"), pid as a decimal count, everything else BinarySI.
func (r ResourceAllocation) Format(v int64) string {
	switch r.Resource {
	case ResourceCPU:
		return resource.NewMilliQuantity(v, resource.DecimalSI).String()
	case ResourcePID:
		return resource.NewQuantity(v, resource.DecimalSI).String()
	}
	return resource.NewQuantity(v, resource.BinarySI).String()
}

// NodeAllocatable is the result of Allocatable, sorted by resource name.
type NodeAllocatable struct {
	Resources    []ResourceAllocation
	PodsEnforced bool
}

// Get returns the allocation of one resource.
func (n NodeAllocatable) Get(name string) (ResourceAllocation, bool) {
	for _, r := range n.Resources {
		if r.Resource == name {
			return r, true
		}
	}
	return ResourceAllocation{}, false
}

// Allocatable computes node allocatable and the pods cgroup limit from node capacity (memory,
// ephemeral-storage, hugepages-* and pid in bytes or counts, cpu in millicores) and cfg, like the
// kubelet's container manager (GetNodeAllocatableReservation, hardEvictionReservation) and node
// status setter. Reservations of resources absent from capacity are ignored. The error (wrapping
// ErrInvalidAllocatable, with the kubelet's text) is returned together with the full result when a
// reservation exceeds capacity, which makes the kubelet refuse to start.
func Allocatable(capacity map[string]int64, cfg Config) (NodeAllocatable, error) {
	eviction := hardEvictionReservation(cfg.ReservationThresholds, capacity)
	var hugepages int64
	for name, v := range capacity {
		if strings.HasPrefix(name, hugepagesPrefix) {
			hugepages = addSat(hugepages, v)
		}
	}
	out := NodeAllocatable{PodsEnforced: cfg.PodsEnforced()}
	var problems []string
	for _, name := range sortedResourceNames(capacity) {
		r := ResourceAllocation{Resource: name, Capacity: capacity[name],
			KubeReserved: reserved(cfg.KubeReserved, name), SystemReserved: reserved(cfg.SystemReserved, name),
			HardEviction: eviction[name]}
		reservation := addSat(addSat(r.KubeReserved, r.SystemReserved), r.HardEviction)
		if reservation > r.Capacity {
			problems = append(problems, fmt.Sprintf("Resource %q has a reservation of %v but capacity of %v.",
				name, r.Format(reservation), r.Format(r.Capacity)))
		}
		r.Allocatable = max(0, r.Capacity-reservation)
		if name == ResourceMemory {
			r.HugePages = hugepages
			r.Allocatable = max(0, r.Allocatable-hugepages)
		}
		r.PodsCgroupLimit = r.Capacity
		if out.PodsEnforced {
			r.PodsCgroupLimit = max(0, r.Capacity-addSat(r.SystemReserved, r.KubeReserved))
		}
		out.Resources = append(out.Resources, r)
	}
	if len(problems) > 0 {
		return out, &kubeletError{reason: ErrInvalidAllocatable, msg: "invalid Node Allocatable configuration. " +
			strings.Join(problems, " Expected capacity >= reservation. ") + " Expected capacity >= reservation."}
	}
	return out, nil
}

// hardEvictionReservation resolves the hard memory.available and nodefs.available thresholds
// against capacity (kubelet cm.hardEvictionReservation; the last one of a signal wins).
func hardEvictionReservation(ts []Threshold, capacity map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for _, t := range ts {
		if t.Operator != LessThan {
			continue
		}
		switch t.Signal {
		case signal.MemoryAvailable:
			out[ResourceMemory] = t.Value.Resolve(capacity[ResourceMemory])
		case signal.NodeFsAvailable:
			out[ResourceEphemeralStorage] = t.Value.Resolve(capacity[ResourceEphemeralStorage])
		}
	}
	return out
}

func reserved(m map[string]resource.Quantity, name string) int64 {
	q, ok := m[name]
	if !ok {
		return 0
	}
	return Amount(q, name == ResourceCPU)
}

func sortedResourceNames(m map[string]int64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
