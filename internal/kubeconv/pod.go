package kubeconv

import (
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
)

// Pod annotations the kubelet reads to classify static and mirror pods. Of a pod read from the API
// server only config.mirror means anything (see critical).
const (
	configSourceAnnotation = "kubernetes.io/config.source"
	configMirrorAnnotation = "kubernetes.io/config.mirror"
	apiserverSource        = "api"
	memoryPressureTaint    = "node.kubernetes.io/memory-pressure"
)

// Candidate converts a pod and its stats (keyed by pod UID, as in signal.Snapshot.Pods) into a
// rank.Candidate, with the kubelet's semantics for requests (GetResourceRequestQuantity with the
// PodLevelResources gate on, its default since v1.34), QoS (GetPodQOS), criticality
// (IsCriticalPod) and the pod's ephemeral-storage limit (PodLimits).
func Candidate(pod *corev1.Pod, stats map[string]signal.PodStats) rank.Candidate {
	c := rank.Candidate{
		UID: string(pod.UID), Namespace: pod.Namespace, Name: pod.Name,
		QOSClass:                      qosClass(pod),
		MemoryRequest:                 requestValue(pod, corev1.ResourceMemory),
		EphemeralStorageRequest:       requestValue(pod, corev1.ResourceEphemeralStorage),
		EphemeralStorageLimit:         ephemeralStorageLimit(pod),
		TerminationGracePeriodSeconds: copyInt64(pod.Spec.TerminationGracePeriodSeconds),
		Containers:                    containers(pod),
		Volumes:                       volumes(pod),
		ToleratesMemoryPressure:       toleratesMemoryPressure(pod),
		PodLevelResources:             podLevelResourcesSet(pod),
	}
	if pod.Spec.Priority != nil {
		c.Priority = *pod.Spec.Priority
	}
	c.Critical, c.CriticalReason = critical(pod)
	if c.PodLevelResources {
		if q, ok := pod.Spec.Resources.Requests[corev1.ResourceMemory]; ok {
			a := rank.NewAmount(q)
			c.PodLevelMemoryRequest = &a
		}
	}
	for _, ref := range pod.OwnerReferences {
		if ref.Controller != nil && *ref.Controller {
			c.OwnerKind, c.OwnerName = ref.Kind, ref.Name
			break
		}
	}
	if ps, ok := stats[string(pod.UID)]; ok {
		c.Stats = &ps
	}
	return c
}

// critical mirrors the kubelet's IsCriticalPod for a pod read from the API server: a mirror pod
// (config.mirror annotation present: the API's copy of a static pod, whose own copy the kubelet
// treats as static), or priority >= 2000000000. The config.source annotation of an API pod decides
// nothing: the API server does not validate it and the kubelet overwrites it with "api" in its own
// copy of every pod it gets from the API server, so a tenant who sets config.source "file" on its pod
// is still evicted by the kubelet, and by us.
func critical(pod *corev1.Pod) (bool, string) {
	if _, ok := pod.Annotations[configMirrorAnnotation]; ok {
		if src, ok := pod.Annotations[configSourceAnnotation]; ok && src != apiserverSource {
			return true, fmt.Sprintf("static pod (%s=%q)", configSourceAnnotation, src)
		}
		return true, "mirror pod"
	}
	if p := pod.Spec.Priority; p != nil && *p >= rank.SystemCriticalPriority {
		return true, fmt.Sprintf("priority %d >= %d", *p, rank.SystemCriticalPriority)
	}
	return false, ""
}

// toleratesMemoryPressure mirrors Toleration.ToleratesTaint for the value-less
// node.kubernetes.io/memory-pressure:NoSchedule taint (Lt/Gt never match an empty value).
func toleratesMemoryPressure(pod *corev1.Pod) bool {
	for _, t := range pod.Spec.Tolerations {
		if t.Effect != "" && t.Effect != corev1.TaintEffectNoSchedule {
			continue
		}
		if t.Key != "" && t.Key != memoryPressureTaint {
			continue
		}
		switch t.Operator {
		case "", corev1.TolerationOpEqual:
			if t.Value == "" {
				return true
			}
		case corev1.TolerationOpExists:
			return true
		}
	}
	return false
}

func containers(pod *corev1.Pod) []rank.Container {
	var out []rank.Container
	add := func(c *corev1.Container, kind rank.ContainerKind) {
		rc := rank.Container{Name: c.Name, Kind: kind,
			MemoryRequest:           amount(c.Resources.Requests, corev1.ResourceMemory),
			EphemeralStorageRequest: amount(c.Resources.Requests, corev1.ResourceEphemeralStorage)}
		if q, ok := c.Resources.Limits[corev1.ResourceEphemeralStorage]; ok {
			a := rank.NewAmount(q)
			rc.EphemeralStorageLimit = &a
		}
		out = append(out, rc)
	}
	for i := range pod.Spec.Containers {
		add(&pod.Spec.Containers[i], rank.ContainerRegular)
	}
	for i := range pod.Spec.InitContainers {
		kind := rank.ContainerInit
		if isSidecar(&pod.Spec.InitContainers[i]) {
			kind = rank.ContainerSidecar
		}
		add(&pod.Spec.InitContainers[i], kind)
	}
	return out
}

// amount returns the request of name, or the zero Amount (printed "0") when absent.
func amount(rl corev1.ResourceList, name corev1.ResourceName) rank.Amount {
	q, ok := rl[name]
	if !ok {
		return rank.Amount{}
	}
	return rank.NewAmount(q)
}

func volumes(pod *corev1.Pod) []rank.Volume {
	var out []rank.Volume
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		rv := rank.Volume{Name: v.Name, Kind: rank.VolumeOther}
		switch {
		case v.EmptyDir != nil:
			rv.Kind, rv.Medium = rank.VolumeEmptyDir, string(v.EmptyDir.Medium)
			if v.EmptyDir.SizeLimit != nil {
				a := rank.NewAmount(*v.EmptyDir.SizeLimit)
				rv.SizeLimit = &a
			}
		case v.HostPath != nil:
			rv.Kind = rank.VolumeHostPath
		case v.GitRepo != nil: //nolint:staticcheck // deprecated but still counted by the kubelet
			rv.Kind = rank.VolumeGitRepo
		case v.ConfigMap != nil:
			rv.Kind = rank.VolumeConfigMap
		}
		out = append(out, rv)
	}
	return out
}

func copyInt64(p *int64) *int64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// UnusedImageBytes estimates what the kubelet's image GC could delete: the bytes of the node's images
// (status.images) of which no name is used by a container of a pod that is not in a terminal phase
// (containers of terminated pods are removed by container GC first, which frees their images). A
// container uses the names of its spec image, its status image and its status imageID, normalized
// like the runtime (docker.io/library/ for a bare name, :latest without a tag). The estimate does not
// know which images the runtime pins (the sandbox image) or pulled less than imageMinimumGCAge ago: it
// can be higher than what the GC frees, by those.
func UnusedImageBytes(images []corev1.ContainerImage, pods []*corev1.Pod) int64 {
	used := map[string]bool{}
	for _, p := range pods {
		if p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		for _, c := range allContainers(p) {
			used[NormalizeImage(c)] = true
		}
		for _, lists := range [][]corev1.ContainerStatus{p.Status.InitContainerStatuses, p.Status.ContainerStatuses,
			p.Status.EphemeralContainerStatuses} {
			for _, s := range lists {
				used[NormalizeImage(s.Image)], used[NormalizeImage(s.ImageID)] = true, true
			}
		}
	}
	var n int64
	for _, img := range images {
		inUse := false
		for _, name := range img.Names {
			inUse = inUse || used[NormalizeImage(name)]
		}
		if !inUse {
			n += img.SizeBytes
		}
	}
	return n
}

func allContainers(p *corev1.Pod) []string {
	var out []string
	for _, c := range p.Spec.InitContainers {
		out = append(out, c.Image)
	}
	for _, c := range p.Spec.Containers {
		out = append(out, c.Image)
	}
	for _, c := range p.Spec.EphemeralContainers {
		out = append(out, c.Image)
	}
	return out
}

// NormalizeImage returns an image reference in the runtime's full form: "nginx" is
// "docker.io/library/nginx:latest", "user/app:1" is "docker.io/user/app:1"; a reference with a
// registry host (a first component with a dot or a port, or localhost) is kept, given ":latest" when it
// has neither tag nor digest. A containerd "sha256:..." image ID is kept as is.
func NormalizeImage(ref string) string {
	if ref == "" || strings.HasPrefix(ref, "sha256:") {
		return ref
	}
	ref = strings.TrimPrefix(ref, "docker-pullable://")
	first, _, hasSlash := strings.Cut(ref, "/")
	switch {
	case !hasSlash:
		ref = "docker.io/library/" + ref
	case !strings.ContainsAny(first, ".:") && first != "localhost":
		ref = "docker.io/" + ref
	}
	last := ref[strings.LastIndex(ref, "/")+1:]
	if !strings.Contains(last, ":") && !strings.Contains(last, "@") {
		ref += ":latest"
	}
	return ref
}

// DeadContainerLogBytes sums the measured logs of the terminated (Succeeded or Failed) pods in snap:
// what the kubelet's container GC could free. A container whose logs were not measured adds nothing.
func DeadContainerLogBytes(pods []*corev1.Pod, snap signal.Snapshot) int64 {
	var sum int64
	for _, p := range pods {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			continue
		}
		for _, c := range snap.Pods[string(p.UID)].Containers {
			if c.LogsUsed != nil {
				sum += int64(*c.LogsUsed)
			}
		}
	}
	return sum
}
