package decision

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kube-pressure/pressure/internal/rank"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
)

// quantityString prints v as the kubelet prints a resource.Quantity of that format.
func quantityString(v int64, f resource.Format) string {
	return resource.NewQuantity(v, f).String()
}

// evictionMessage builds the pressure-path message and event annotations exactly as the kubelet's
// evictionMessage: acted holds the acted-on thresholds in the order the step sorted them.
func evictionMessage(res signal.Resource, c rank.Candidate, cfg threshold.Config, acted []ThresholdID,
	obs map[signal.Signal]signal.Observation) (string, map[string]string) {
	annotations := map[string]string{}
	var b strings.Builder
	fmt.Fprintf(&b, "The node was low on resource: %s. ", res)
	for _, id := range acted {
		t := cfg.Thresholds[id]
		if t.Signal.Resource() != res {
			continue
		}
		if o, ok := obs[t.Signal]; ok {
			fmt.Fprintf(&b, "Threshold quantity: %s, available: %s. ",
				threshold.FormatThreshold(t.Value, o.Capacity), threshold.FormatAvailable(o.Available, t.Signal))
			break
		}
	}
	if c.Stats == nil {
		return b.String(), annotations
	}
	// The kubelet requires podStats.Memory != nil; a nil working set is our closest equivalent.
	if res == signal.ResourceMemory && c.PodLevelResources && c.PodLevelMemoryRequest != nil &&
		c.Stats.MemoryWorkingSet != nil {
		usage := quantityString(int64(*c.Stats.MemoryWorkingSet), resource.BinarySI)
		fmt.Fprintf(&b, "Pod %s was using %s, request is %s, has larger consumption of %s. ", c.Name, usage,
			c.PodLevelMemoryRequest.String(), res)
		annotations[AnnotationOffendingPod] = c.Name
		annotations[AnnotationOffendingPodUsage] = usage
	}
	var names, usages []string
	for _, cs := range c.Stats.Containers {
		spec, ok := findContainer(c, cs.Name)
		if !ok {
			continue
		}
		usage, ok := containerUsage(res, cs)
		request := containerRequest(res, spec)
		if ok && request.ExceededBy(usage) {
			u := quantityString(usage, resource.BinarySI)
			fmt.Fprintf(&b, "Container %s was using %s, request is %s, has larger consumption of %s. ",
				spec.Name, u, request.String(), res)
			names = append(names, spec.Name)
			usages = append(usages, u)
		}
	}
	annotations[AnnotationOffendingContainers] = strings.Join(names, ",")
	annotations[AnnotationOffendingContainersUsage] = strings.Join(usages, ",")
	annotations[AnnotationStarvedResource] = string(res)
	return b.String(), annotations
}

// findContainer finds the first regular, then init/sidecar container named name (ephemeral containers are
// not candidates' containers).
func findContainer(c rank.Candidate, name string) (rank.Container, bool) {
	for _, regular := range []bool{true, false} {
		for _, ct := range c.Containers {
			if (ct.Kind == rank.ContainerRegular || ct.Kind == "") == regular && ct.Name == name {
				return ct, true
			}
		}
	}
	return rank.Container{}, false
}

// containerUsage is the usage the message compares: the working set for memory, rootfs + logs for
// ephemeral-storage (only when both are measured); nothing for inodes and pids.
func containerUsage(res signal.Resource, cs signal.ContainerStats) (int64, bool) {
	switch res {
	case signal.ResourceMemory:
		if cs.MemoryWorkingSet != nil {
			return int64(*cs.MemoryWorkingSet), true
		}
	case signal.ResourceEphemeralStorage:
		if cs.RootfsUsed != nil && cs.LogsUsed != nil {
			return int64(*cs.RootfsUsed + *cs.LogsUsed), true
		}
	}
	return 0, false
}

// containerRequest is the container's request of res (absent: zero, printed "0").
func containerRequest(res signal.Resource, ct rank.Container) rank.Amount {
	switch res {
	case signal.ResourceMemory:
		return ct.MemoryRequest
	case signal.ResourceEphemeralStorage:
		return ct.EphemeralStorageRequest
	}
	return rank.Amount{}
}
