package rank

import (
	"math"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/signal"
)

// QoS classes as the API spells them (v1.PodQOSClass).
const (
	QOSGuaranteed = "Guaranteed"
	QOSBurstable  = "Burstable"
	QOSBestEffort = "BestEffort"
)

// SystemCriticalPriority is the priority at and above which a pod is critical (2 × 1,000,000,000).
const SystemCriticalPriority int32 = 2000000000

// Candidate is everything the ranking and the decision need to know about one active pod. It is built
// from a v1.Pod and its stats by internal/kubeconv; nothing below this package ever sees a v1.Pod.
type Candidate struct {
	UID       string
	Namespace string
	Name      string
	// Priority is spec.priority; a nil priority is 0.
	Priority int32
	// QOSClass is "Guaranteed", "Burstable" or "BestEffort".
	QOSClass string
	// Critical is the kubelet's IsCriticalPod: a static pod, a mirror pod, or priority >= 2000000000.
	Critical bool
	// CriticalReason says why, e.g. "static pod", "mirror pod", "priority 2000000000 >= 2000000000".
	CriticalReason string
	// MemoryRequest is the kubelet's GetResourceRequestQuantity(pod, memory): the effective pod request
	// (containers and sidecars summed, max'ed with each init container, or the pod-level request) plus
	// spec.overhead[memory] when that request is non-zero. 0 for BestEffort.
	MemoryRequest int64
	// EphemeralStorageRequest is the same computation for ephemeral-storage.
	EphemeralStorageRequest int64
	// EphemeralStorageLimit is the kubelet's PodLimits(pod)[ephemeral-storage]: the pod's total
	// ephemeral-storage limit (containers summed, max'ed with init containers, or the pod-level limit).
	// nil when no container and no pod-level limit sets one. Printed in the pod-level limit message.
	EphemeralStorageLimit *Amount
	// TerminationGracePeriodSeconds is spec.terminationGracePeriodSeconds (nil when unset).
	TerminationGracePeriodSeconds *int64
	// Containers are the regular, init and sidecar containers in spec order (regular first, then init
	// containers, as the kubelet's eviction message searches them). Ephemeral containers are excluded.
	Containers []Container
	// Volumes are the pod's volumes in spec order. Every emptyDir (any medium: its sizeLimit is checked
	// regardless) and every hostPath, gitRepo and configMap volume must be listed (they count as local
	// storage in disk ranking); other volumes may be listed with Kind VolumeOther.
	Volumes []Volume
	// ToleratesMemoryPressure reports whether the pod tolerates node.kubernetes.io/memory-pressure:NoSchedule
	// (used by admission of BestEffort pods under MemoryPressure).
	ToleratesMemoryPressure bool
	// PodLevelMemoryRequest is spec.resources.requests[memory] when the pod sets pod-level resources
	// (PodLevelResources); nil otherwise. The kubelet then adds a "Pod <name> was using" message segment.
	PodLevelMemoryRequest *Amount
	// PodLevelResources reports whether spec.resources sets any requests or limits.
	PodLevelResources bool
	// OwnerKind and OwnerName name the controller owner reference, if any.
	OwnerKind string
	OwnerName string
	// Stats is the pod's usage from the same snapshot as the node observations (Snapshot.Pods[UID]);
	// nil means the pod has no stats (it then ranks first in every stats-based key).
	Stats *signal.PodStats
}

// ContainerKind distinguishes regular, init and restartable-init (sidecar) containers.
type ContainerKind string

// Container kinds.
const (
	ContainerRegular ContainerKind = "regular"
	ContainerInit    ContainerKind = "init"
	ContainerSidecar ContainerKind = "sidecar" // an init container with restartPolicy Always
)

// Container is one container of a candidate pod with the requests and limits that eviction reads.
type Container struct {
	Name string
	// Kind is regular, init or sidecar; "" counts as regular.
	Kind ContainerKind
	// MemoryRequest and EphemeralStorageRequest are the container's requests; an absent request is the
	// zero Amount, which prints "0".
	MemoryRequest           Amount
	EphemeralStorageRequest Amount
	// EphemeralStorageLimit is the container's ephemeral-storage limit; nil when unset.
	EphemeralStorageLimit *Amount
}

// VolumeKind is the kind of a pod volume as far as eviction cares.
type VolumeKind string

// Volume kinds. Only hostPath, gitRepo, configMap and disk-backed emptyDir count as local volumes for
// disk ranking (kubelet localVolumeNames).
const (
	VolumeEmptyDir  VolumeKind = "emptyDir"
	VolumeHostPath  VolumeKind = "hostPath"
	VolumeGitRepo   VolumeKind = "gitRepo"
	VolumeConfigMap VolumeKind = "configMap"
	VolumeOther     VolumeKind = "other"
)

// Volume is one volume of a candidate pod.
type Volume struct {
	Name string
	Kind VolumeKind
	// Medium is the emptyDir medium ("" for the default disk medium, "Memory", "HugePages"...).
	Medium string
	// SizeLimit is the emptyDir sizeLimit; nil when unset.
	SizeLimit *Amount
}

// Local reports whether the kubelet counts the volume as local storage when ranking for disk pressure:
// hostPath, gitRepo, configMap, and emptyDir with the default medium.
func (v Volume) Local() bool {
	switch v.Kind {
	case VolumeHostPath, VolumeGitRepo, VolumeConfigMap:
		return true
	case VolumeEmptyDir:
		return v.Medium == ""
	}
	return false
}

// Amount is a resource amount as the pod spec wrote it: its value and the format the kubelet prints it
// in (resource.Quantity.String()). The zero Amount is 0.
type Amount struct {
	Value int64
	// Format is the quantity's format; "" means BinarySI.
	Format resource.Format
	// Fraction is the quantity as the kubelet prints it when it is not a whole number ("500m" for 0.5,
	// which the API accepts for ephemeral-storage); Value is then rounded up. "" for a whole number.
	Fraction string
}

// NewAmount returns the Amount of q (value rounded up to an integer, as Quantity.Value does, and the
// exact text when that rounded), saturated at math.MaxInt64: Quantity.Value reads a decimal beyond
// int64 (1e30) as 0, while the kubelet compares the quantity exactly.
func NewAmount(q resource.Quantity) Amount {
	a := Amount{Value: q.Value(), Format: q.Format}
	if q.Cmp(*resource.NewQuantity(math.MaxInt64, resource.DecimalSI)) >= 0 {
		a.Value = math.MaxInt64
		return a
	}
	if q.Cmp(*resource.NewQuantity(a.Value, q.Format)) != 0 {
		a.Fraction = q.String()
	}
	return a
}

// String prints the amount as the kubelet would print the corresponding resource.Quantity.
func (a Amount) String() string {
	if a.Fraction != "" {
		return a.Fraction
	}
	f := a.Format
	if f == "" {
		f = resource.BinarySI
	}
	return resource.NewQuantity(a.Value, f).String()
}

// ExceededBy reports whether the whole number used is above the amount, as the kubelet's
// Quantity.Cmp(used) < 0: for a fraction rounded up to Value, used >= Value.
func (a Amount) ExceededBy(used int64) bool {
	if a.Fraction != "" {
		return used >= a.Value
	}
	return used > a.Value
}

// Int64 returns a pointer to v, for building Candidate literals.
func Int64(v int64) *int64 { return &v }
