package janitor

import (
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/evidence"
)

// Annotations the janitor reads and writes on pods.
const (
	// AnnotationPreserve set to "true" on a pod keeps it forever.
	AnnotationPreserve = "pressure.kube-pressure.io/preserve"
	// AnnotationTerminalSince records (RFC 3339) when the janitor first saw a terminal pod that has
	// neither a DisruptionTarget condition nor a container termination time.
	AnnotationTerminalSince = "pressure.kube-pressure.io/terminal-since"
)

// ReasonEvicted is the status.reason of kubelet evictions and admission rejections.
const ReasonEvicted = "Evicted"

// TimeSource says where PodInfo.EvictedAt came from.
type TimeSource string

// Time sources, most to least authoritative.
const (
	FromDisruptionTarget     TimeSource = "DisruptionTarget"
	FromContainerTermination TimeSource = "ContainerTermination"
	FromFirstSeen            TimeSource = "FirstSeen"
	FromNone                 TimeSource = ""
)

// OwnerRef is a pod's controller owner reference (zero for bare pods); the evidence Event is on it.
type OwnerRef = evidence.Owner

// PodInfo is what Select and the evidence need from a pod.
type PodInfo struct {
	Namespace       string
	Name            string
	UID             string
	ResourceVersion string
	Labels          map[string]string
	Phase           v1.PodPhase
	Reason          string
	Message         string
	Node            string
	QOS             v1.PodQOSClass
	Owner           OwnerRef
	CreatedAt       time.Time
	EvictedAt       time.Time // zero when Source is FromNone
	Source          TimeSource
	Terminating     bool // deletionTimestamp set
	Finalizers      bool // metadata.finalizers not empty
	Preserve        bool
	Requests        v1.ResourceList // sum over regular containers
	Limits          v1.ResourceList // sum over regular containers
}

// Key is namespace/name.
func (p *PodInfo) Key() string { return p.Namespace + "/" + p.Name }

// FromPod converts a pod. It never reads the clock: a pod with no eviction time gets Source
// FromNone and Select treats it as first seen now.
func FromPod(pod *v1.Pod) PodInfo {
	info := PodInfo{
		Namespace:       pod.Namespace,
		Name:            pod.Name,
		UID:             string(pod.UID),
		ResourceVersion: pod.ResourceVersion,
		Labels:          pod.Labels,
		Phase:           pod.Status.Phase,
		Reason:          pod.Status.Reason,
		Message:         pod.Status.Message,
		Node:            pod.Spec.NodeName,
		QOS:             pod.Status.QOSClass,
		Owner:           controllerOf(pod),
		CreatedAt:       pod.CreationTimestamp.Time,
		Terminating:     pod.DeletionTimestamp != nil,
		Finalizers:      len(pod.Finalizers) > 0,
		Preserve:        pod.Annotations[AnnotationPreserve] == "true",
	}
	info.EvictedAt, info.Source = evictionTime(pod)
	info.Requests, info.Limits = sumResources(pod.Spec.Containers)
	return info
}

func controllerOf(pod *v1.Pod) OwnerRef {
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			return OwnerRef{APIVersion: ref.APIVersion, Kind: ref.Kind, Name: ref.Name, UID: string(ref.UID)}
		}
	}
	return OwnerRef{}
}

// evictionTime implements the documented precedence; the pod's start time is never used.
func evictionTime(pod *v1.Pod) (time.Time, TimeSource) {
	for _, c := range pod.Status.Conditions {
		if c.Type == v1.DisruptionTarget && c.Status == v1.ConditionTrue && !c.LastTransitionTime.IsZero() {
			return c.LastTransitionTime.Time, FromDisruptionTarget
		}
	}
	if t, ok := latestTermination(pod); ok {
		return t, FromContainerTermination
	}
	if s, ok := pod.Annotations[AnnotationTerminalSince]; ok {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t, FromFirstSeen
		}
	}
	return time.Time{}, FromNone
}

func latestTermination(pod *v1.Pod) (time.Time, bool) {
	var latest time.Time
	for _, list := range [][]v1.ContainerStatus{pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses} {
		for _, cs := range list {
			if t := cs.State.Terminated; t != nil && t.FinishedAt.After(latest) {
				latest = t.FinishedAt.Time
			}
		}
	}
	return latest, !latest.IsZero()
}

func sumResources(containers []v1.Container) (requests, limits v1.ResourceList) {
	requests, limits = v1.ResourceList{}, v1.ResourceList{}
	for _, c := range containers {
		addTo(requests, c.Resources.Requests)
		addTo(limits, c.Resources.Limits)
	}
	return requests, limits
}

func addTo(sum, add v1.ResourceList) {
	for name, q := range add {
		cur, ok := sum[name]
		if !ok {
			cur = resource.Quantity{Format: q.Format}
		}
		cur.Add(q)
		sum[name] = cur
	}
}
