package differential

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Local ephemeral-storage limits, aimed at the kubelet's three checks (emptyDir sizeLimit, the pod's
// total limit, a container's limit) and at their boundaries: usage one byte below, at and above a
// limit. The spec side covers what PodLimits aggregates (regular containers summed, init containers
// as a maximum, sidecars in both, overhead added to a non-zero total), what the container check
// ignores (init and sidecar limits, a zero limit), pod-level resources naming ephemeral-storage
// (not a pod-level resource: ignored), emptyDir sizeLimits of zero or in memory, and decimal and
// fractional quantities.

// localQuantity is an ephemeral-storage limit or sizeLimit.
func (g *gen) localQuantity() resource.Quantity {
	return resource.MustParse(g.pick("100Mi", "256Mi", "500Mi", "1Gi", "2Gi", "500M", "1G", "1.5Gi", "64Ki", "1",
		"1500m", "0.5", "0"))
}

// localLimits gives p local ephemeral-storage limits of every kind the kubelet checks.
func (g *gen) localLimits(p *v1.Pod) {
	setLimit := func(c *v1.Container) {
		if c.Resources.Limits == nil {
			c.Resources.Limits = v1.ResourceList{}
		}
		c.Resources.Limits[v1.ResourceEphemeralStorage] = g.localQuantity()
	}
	for i := range p.Spec.Containers {
		if g.chance(0.6) {
			setLimit(&p.Spec.Containers[i])
		}
	}
	if g.chance(0.25) {
		ic := v1.Container{Name: "init-limited"}
		if g.chance(0.5) {
			always := v1.ContainerRestartPolicyAlways
			ic.Name, ic.RestartPolicy = "sidecar-limited", &always
		}
		setLimit(&ic)
		p.Spec.InitContainers = append(p.Spec.InitContainers, ic)
	}
	if g.chance(0.1) {
		if p.Spec.Overhead == nil {
			p.Spec.Overhead = v1.ResourceList{}
		}
		p.Spec.Overhead[v1.ResourceEphemeralStorage] = resource.MustParse(g.pick("10Mi", "1Gi"))
	}
	if g.chance(0.08) { // with a memory request, so that pod-level resources are set
		p.Spec.Resources = &v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("128Mi")},
			Limits:   v1.ResourceList{v1.ResourceEphemeralStorage: g.localQuantity()}}
	}
	for n := g.r.Intn(3); n > 0; n-- {
		name := g.pick("cache", "spool", "work") + string(rune('0'+n))
		p.Spec.Volumes = append(p.Spec.Volumes, g.emptyDir(name, 0.85, g.localQuantity))
	}
}

// near is an amount at a limit's boundary: one byte below, at, one byte above, a MiB above, or half.
func (g *gen) near(limit int64) int64 {
	return max(0, limit+[]int64{-1, 0, 1, 1 << 20, -limit / 2}[g.r.Intn(5)])
}

// aimLocal moves some of ps's usage onto the boundaries of p's local ephemeral-storage limits.
func (g *gen) aimLocal(p *v1.Pod, ps *statsapi.PodStats) {
	sizes := map[string]int64{}
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil {
			sizes[v.Name] = v.EmptyDir.SizeLimit.Value()
		}
	}
	for i := range ps.VolumeStats {
		if limit, ok := sizes[ps.VolumeStats[i].Name]; ok && g.chance(0.6) {
			ps.VolumeStats[i].UsedBytes = u64(g.near(limit))
		}
	}
	if len(ps.VolumeStats) > 0 && g.chance(0.05) { // the kubelet keeps the last entry of a name
		dup := ps.VolumeStats[0]
		dup.UsedBytes = u64(int64(*dup.UsedBytes) + 1<<20)
		ps.VolumeStats = append(ps.VolumeStats, dup)
	}
	var total int64
	limits := map[string]int64{}
	for _, c := range append(append([]v1.Container{}, p.Spec.Containers...), p.Spec.InitContainers...) {
		if q, ok := c.Resources.Limits[v1.ResourceEphemeralStorage]; ok {
			limits[c.Name] = q.Value()
			total += q.Value()
		}
	}
	for i := range ps.Containers {
		cs := &ps.Containers[i]
		limit, ok := limits[cs.Name]
		if !ok || !g.chance(0.6) {
			continue
		}
		used := g.near(limit)
		switch g.r.Intn(3) {
		case 0: // all in logs: counts on every filesystem layout
			cs.Logs, cs.Rootfs = &statsapi.FsStats{UsedBytes: u64(used)}, &statsapi.FsStats{UsedBytes: u64(0)}
		case 1: // split: logs + rootfs, rootfs counting only without a dedicated imagefs
			cs.Logs, cs.Rootfs = &statsapi.FsStats{UsedBytes: u64(used / 3)}, &statsapi.FsStats{UsedBytes: u64(used - used/3)}
		default: // no logs stats
			cs.Logs, cs.Rootfs = nil, &statsapi.FsStats{UsedBytes: u64(used)}
		}
	}
	if len(limits) > 0 && g.chance(0.5) {
		if ps.EphemeralStorage == nil {
			ps.EphemeralStorage = &statsapi.FsStats{}
		}
		ps.EphemeralStorage.UsedBytes = u64(g.near(total)) // the sum: the pod's limit unless init containers dominate
	}
}
