package kubeconv

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/rank"
)

// isSidecar reports whether an init container is a restartable init container.
func isSidecar(c *corev1.Container) bool {
	return c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
}

// podLevelSupported are the resources pod-level resources may set (component-helpers
// IsSupportedPodLevelResource): cpu, memory and hugepages-*.
func podLevelSupported(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory ||
		strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}

// podLevelResourcesSet mirrors IsPodLevelResourcesSet: spec.resources requests or limits name a
// supported resource.
func podLevelResourcesSet(pod *corev1.Pod) bool {
	r := pod.Spec.Resources
	if r == nil {
		return false
	}
	for name := range r.Requests {
		if podLevelSupported(name) {
			return true
		}
	}
	for name := range r.Limits {
		if podLevelSupported(name) {
			return true
		}
	}
	return false
}

// requestQuantity mirrors the kubelet's GetResourceRequestQuantity with PodLevelResources on: with
// pod-level resources set, only the pod-level request of a supported resource counts (so
// ephemeral-storage is then 0); otherwise the container aggregate. Overhead is added only to a
// non-zero request.
func requestQuantity(pod *corev1.Pod, name corev1.ResourceName) resource.Quantity {
	var q resource.Quantity
	if podLevelResourcesSet(pod) {
		if v, ok := pod.Spec.Resources.Requests[name]; ok && podLevelSupported(name) {
			q = v.DeepCopy()
		}
	} else {
		q = aggregate(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Requests })[name]
	}
	if o, ok := pod.Spec.Overhead[name]; ok && !q.IsZero() {
		q.Add(o)
	}
	return q
}

// requestValue is requestQuantity rounded up to an integer (Quantity.Value), saturated at the
// largest int64 (rank.NewAmount).
func requestValue(pod *corev1.Pod, name corev1.ResourceName) int64 {
	return rank.NewAmount(requestQuantity(pod, name)).Value
}

// ephemeralStorageLimit mirrors PodLimits(pod, {})[ephemeral-storage] as the kubelet's
// podEphemeralStorageLimitEviction reads it: the container aggregate (pod-level resources never
// carry ephemeral-storage), plus overhead when non-zero. nil when no container names the resource;
// a present zero limit is returned as zero (the kubelet then evicts on any usage).
func ephemeralStorageLimit(pod *corev1.Pod) *rank.Amount {
	limits := aggregate(pod, func(c *corev1.Container) corev1.ResourceList { return c.Resources.Limits })
	q, ok := limits[corev1.ResourceEphemeralStorage]
	if !ok {
		return nil
	}
	if o, ok := pod.Spec.Overhead[corev1.ResourceEphemeralStorage]; ok && !q.IsZero() {
		q.Add(o)
	}
	a := rank.NewAmount(q)
	return &a
}

// aggregate mirrors component-helpers AggregateContainerRequests/Limits: regular containers and
// sidecars are summed; each init container needs itself plus the sidecars started before it, and
// the pod needs the maximum of the sum and every init container's need.
func aggregate(pod *corev1.Pod, get func(*corev1.Container) corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for i := range pod.Spec.Containers {
		addList(out, get(&pod.Spec.Containers[i]))
	}
	sidecars := corev1.ResourceList{}
	inits := corev1.ResourceList{}
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		var need corev1.ResourceList
		if isSidecar(c) {
			addList(out, get(c))
			addList(sidecars, get(c))
			need = sidecars
		} else {
			need = corev1.ResourceList{}
			addList(need, get(c))
			addList(need, sidecars)
		}
		maxList(inits, need)
	}
	maxList(out, inits)
	return out
}

func addList(list, add corev1.ResourceList) {
	for name, q := range add {
		if v, ok := list[name]; ok {
			v.Add(q)
			list[name] = v
		} else {
			list[name] = q.DeepCopy()
		}
	}
}

func maxList(list, other corev1.ResourceList) {
	for name, q := range other {
		if v, ok := list[name]; !ok || q.Cmp(v) > 0 {
			list[name] = q.DeepCopy()
		}
	}
}

// qosClass mirrors GetPodQOS: status.qosClass when set, else ComputePodQOS with PodLevelResources
// on (a non-nil spec.resources decides alone, even when empty).
func qosClass(pod *corev1.Pod) string {
	if pod.Status.QOSClass != "" {
		return string(pod.Status.QOSClass)
	}
	requests, limits := corev1.ResourceList{}, corev1.ResourceList{}
	guaranteed := true
	if r := pod.Spec.Resources; r != nil {
		addQOS(requests, r.Requests)
		addQOS(limits, r.Limits)
		if len(r.Limits) > 0 && !hasCPUAndMemory(r.Limits) {
			guaranteed = false
		}
	} else {
		all := append(append([]corev1.Container{}, pod.Spec.Containers...), pod.Spec.InitContainers...)
		for i := range all {
			addQOS(requests, all[i].Resources.Requests)
			addQOS(limits, all[i].Resources.Limits)
			if !hasCPUAndMemory(all[i].Resources.Limits) {
				guaranteed = false
			}
		}
	}
	if len(requests) == 0 && len(limits) == 0 {
		return rank.QOSBestEffort
	}
	for name, req := range requests {
		if lim, ok := limits[name]; !ok || lim.Cmp(req) != 0 {
			guaranteed = false
			break
		}
	}
	if guaranteed && len(requests) == len(limits) {
		return rank.QOSGuaranteed
	}
	return rank.QOSBurstable
}

func qosResource(name corev1.ResourceName) bool {
	return name == corev1.ResourceCPU || name == corev1.ResourceMemory
}

// addQOS sums the positive cpu and memory quantities of add into list.
func addQOS(list, add corev1.ResourceList) {
	for name, q := range add {
		if qosResource(name) && q.Sign() == 1 {
			addList(list, corev1.ResourceList{name: q})
		}
	}
}

// hasCPUAndMemory reports whether rl has positive cpu and memory quantities.
func hasCPUAndMemory(rl corev1.ResourceList) bool {
	cpu, mem := rl[corev1.ResourceCPU], rl[corev1.ResourceMemory]
	return cpu.Sign() == 1 && mem.Sign() == 1
}
