package differential

import (
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

func (g *gen) memQuantity() resource.Quantity {
	return resource.MustParse(g.pick("64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "1.5Gi", "100M", "300Mi",
		fmt.Sprint(50000000+g.r.Int63n(1<<30)), "500m")) // 500m: the common typo for 500Mi, half a byte
}

func (g *gen) diskQuantity() resource.Quantity {
	return resource.MustParse(g.pick("100Mi", "500Mi", "1Gi", "2Gi", "1G", fmt.Sprint(10000000+g.r.Int63n(1<<31))))
}

func (g *gen) container(name string, qos string) v1.Container {
	c := v1.Container{Name: name}
	switch qos {
	case "Guaranteed":
		mem, cpu := g.memQuantity(), resource.MustParse(g.pick("100m", "1", "250m"))
		c.Resources.Requests = v1.ResourceList{v1.ResourceMemory: mem, v1.ResourceCPU: cpu}
		c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: mem, v1.ResourceCPU: cpu}
	case "Burstable":
		c.Resources.Requests = v1.ResourceList{}
		if g.chance(0.8) {
			c.Resources.Requests[v1.ResourceMemory] = g.memQuantity()
		} else {
			c.Resources.Requests[v1.ResourceCPU] = resource.MustParse("100m")
		}
		if g.chance(0.4) {
			lim := c.Resources.Requests.Memory().DeepCopy()
			lim.Add(g.memQuantity())
			c.Resources.Limits = v1.ResourceList{v1.ResourceMemory: lim}
		}
	}
	if qos != "BestEffort" && g.chance(0.3) {
		c.Resources.Requests[v1.ResourceEphemeralStorage] = g.diskQuantity()
	}
	if g.chance(0.2) {
		if c.Resources.Limits == nil {
			c.Resources.Limits = v1.ResourceList{}
		}
		c.Resources.Limits[v1.ResourceEphemeralStorage] = g.diskQuantity()
		if qos == "Guaranteed" || qos == "Burstable" {
			if c.Resources.Requests == nil {
				c.Resources.Requests = v1.ResourceList{}
			}
			if _, ok := c.Resources.Requests[v1.ResourceEphemeralStorage]; !ok && qos == "Guaranteed" {
				c.Resources.Requests[v1.ResourceEphemeralStorage] = c.Resources.Limits[v1.ResourceEphemeralStorage]
			}
		}
	}
	return c
}

func (g *gen) genPod(i int) v1.Pod {
	qos := g.pick("BestEffort", "Burstable", "Burstable", "Guaranteed")
	p := v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%02d", i), Namespace: "default", UID: uid(i)}}
	nc := 1 + g.r.Intn(3)
	for c := 0; c < nc; c++ {
		p.Spec.Containers = append(p.Spec.Containers, g.container(fmt.Sprintf("c%d", c), qos))
	}
	if g.chance(0.2) {
		ic := g.container("init", qos)
		if g.chance(0.5) {
			always := v1.ContainerRestartPolicyAlways
			ic.Name, ic.RestartPolicy = "sidecar", &always
		}
		p.Spec.InitContainers = append(p.Spec.InitContainers, ic)
	}
	if qos != "BestEffort" && g.chance(0.08) {
		p.Spec.Resources = &v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceMemory: g.memQuantity()}}
	}
	if qos != "BestEffort" && g.chance(0.05) {
		p.Spec.Overhead = v1.ResourceList{v1.ResourceMemory: resource.MustParse("64Mi")}
	}
	if pr := []int64{-1, -1, 0, 1000, -10, 100000, 2000000000, 2000001000}[g.r.Intn(8)]; pr != -1 {
		if pr < 2000000000 || g.chance(0.4) {
			v := int32(pr)
			p.Spec.Priority = &v
		}
	}
	switch {
	case g.chance(0.04):
		p.Annotations = map[string]string{"kubernetes.io/config.source": "file"}
	case g.chance(0.03):
		p.Annotations = map[string]string{"kubernetes.io/config.source": "api", "kubernetes.io/config.mirror": "abc"}
	case g.chance(0.04):
		// A tenant's pod that claims to be a static pod: the kubelet evicts it like any other.
		p.Annotations = map[string]string{"kubernetes.io/config.source": "api", spoofAnnotation: "file"}
	}
	if t := []int64{-1, 0, 30, 120}[g.r.Intn(4)]; t >= 0 {
		p.Spec.TerminationGracePeriodSeconds = &t
	}
	if g.chance(0.5) {
		p.Spec.Volumes = append(p.Spec.Volumes, g.emptyDir("scratch", 0.5, g.diskQuantity))
	}
	if g.chance(0.3) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "conf", VolumeSource: v1.VolumeSource{
			ConfigMap: &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "x"}}}})
	}
	if g.chance(0.1) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: "host", VolumeSource: v1.VolumeSource{
			HostPath: &v1.HostPathVolumeSource{Path: "/tmp"}}})
	}
	return p
}

// emptyDir is an emptyDir volume with a sizeLimit from size with probability sized, in memory 15 % of
// the time.
func (g *gen) emptyDir(name string, sized float64, size func() resource.Quantity) v1.Volume {
	ed := &v1.EmptyDirVolumeSource{}
	if g.chance(sized) {
		q := size()
		ed.SizeLimit = &q
	}
	if g.chance(0.15) {
		ed.Medium = v1.StorageMediumMemory
	}
	return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: ed}}
}

// usage returns a random usage around a request (or absolute when the request is below 1Mi: a
// working set of a few bytes, as around the 500m typo, does not exist; docs/kubelet-fidelity.md row 17).
func (g *gen) usage(request int64) int64 {
	if request >= 1<<20 && g.chance(0.7) {
		return request * int64(20+g.r.Intn(280)) / 100
	}
	return 1<<20 + g.r.Int63n(2<<30)
}

func (g *gen) podStats(p *v1.Pod, stamp time.Time, big bool) statsapi.PodStats {
	ps := statsapi.PodStats{PodRef: statsapi.PodReference{Name: p.Name, Namespace: p.Namespace, UID: string(p.UID)},
		StartTime: metav1.NewTime(startTime)}
	nilChance := 0.05
	if big {
		nilChance = 0
	}
	var podWS, eph, ephInodes int64
	names := []string{}
	for _, c := range p.Spec.Containers {
		names = append(names, c.Name)
	}
	for _, c := range p.Spec.InitContainers {
		if c.RestartPolicy != nil {
			names = append(names, c.Name) // running sidecar
		}
	}
	if g.chance(0.05) {
		names = append(names, "debugger") // an ephemeral container: not in the spec
	}
	for _, name := range names {
		cs := statsapi.ContainerStats{Name: name, StartTime: metav1.NewTime(startTime)}
		req := int64(0)
		for _, c := range append(append([]v1.Container{}, p.Spec.Containers...), p.Spec.InitContainers...) {
			if c.Name == name {
				req = c.Resources.Requests.Memory().Value()
			}
		}
		ws := g.usage(req)
		podWS += ws
		if !g.chance(nilChance) {
			cs.Memory = &statsapi.MemoryStats{Time: mt(stamp), WorkingSetBytes: u64(ws)}
		}
		root, logs := g.usage(0)/4, g.r.Int63n(200<<20)
		rootIn, logIn := 1+g.r.Int63n(50000), 1+g.r.Int63n(100)
		eph += root + logs
		ephInodes += rootIn + logIn
		if !g.chance(nilChance) {
			cs.Rootfs = &statsapi.FsStats{Time: mt(stamp), UsedBytes: u64(root), InodesUsed: u64(rootIn)}
		}
		if !g.chance(nilChance) {
			cs.Logs = &statsapi.FsStats{Time: mt(stamp), UsedBytes: u64(logs), InodesUsed: u64(logIn)}
		}
		ps.Containers = append(ps.Containers, cs)
	}
	for _, v := range p.Spec.Volumes {
		used, in := g.r.Int63n(3<<30), g.r.Int63n(10000)
		if v.EmptyDir != nil && v.EmptyDir.SizeLimit != nil && g.chance(0.5) {
			used = v.EmptyDir.SizeLimit.Value() + []int64{-1, 0, 1, 1 << 20}[g.r.Intn(4)]
		}
		eph += used
		ephInodes += in
		ps.VolumeStats = append(ps.VolumeStats, statsapi.VolumeStats{Name: v.Name,
			FsStats: statsapi.FsStats{Time: mt(stamp), UsedBytes: u64(used), InodesUsed: u64(in)}})
	}
	if !g.chance(nilChance) {
		ps.Memory = &statsapi.MemoryStats{Time: mt(stamp), WorkingSetBytes: u64(podWS)}
	}
	if !g.chance(nilChance) {
		ps.EphemeralStorage = &statsapi.FsStats{Time: mt(stamp), UsedBytes: u64(eph), InodesUsed: u64(ephInodes)}
	}
	if !g.chance(nilChance) {
		n := 1 + g.r.Int63n(500)
		if big {
			n = 1 + g.r.Int63n(1<<30)
		}
		ps.ProcessStats = &statsapi.ProcessStats{ProcessCount: u64(n)}
	}
	return ps
}

// spoofAnnotation marks a generated pod whose API copy carries a tenant's config.source (its value): the
// kubelet's own copy has config.source "api" (the kubelet overwrites it), ours the spoofed value.
const spoofAnnotation = "test.pressure.kube-pressure.io/spoofed-config-source"

// apiView is the API server's copy of a pod the kubelet's eviction manager sees as generated: a static
// pod (config.source not "api") is shown as its mirror pod (config.mirror added), and a pod marked with
// spoofAnnotation carries the spoofed config.source. kubeconv reads pods from the API server.
func apiView(p *v1.Pod) *v1.Pod {
	src, ok := p.Annotations["kubernetes.io/config.source"]
	spoof, spoofed := p.Annotations[spoofAnnotation]
	if !spoofed && (!ok || src == "api") {
		return p
	}
	q := p.DeepCopy()
	switch {
	case spoofed:
		q.Annotations["kubernetes.io/config.source"] = spoof
		delete(q.Annotations, spoofAnnotation)
	case q.Annotations["kubernetes.io/config.mirror"] == "":
		q.Annotations["kubernetes.io/config.mirror"] = "mirror-of-" + string(p.UID)
	}
	return q
}
