package differential

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// Case families aimed at the differences between the supported kubelet releases
// (docs/kubelet-versions.md): restartable init containers' ephemeral-storage limits (checked from
// 1.37), memory-backed emptyDir sizeLimits (exempt in 1.37 with InPlacePodVerticalScalingMemoryBackedVolumes)
// and the soft-eviction grace (the pod's terminationGracePeriodSeconds ignored in 1.34 with
// AllowOverwriteTerminationGracePeriodSeconds). Every family runs against every release whose kubelet
// accepts its featureGates; the families of one difference are the same cases but for featureGates.

const (
	gateMemoryBackedVolumes = "InPlacePodVerticalScalingMemoryBackedVolumes"
	gateOverwriteGrace      = "AllowOverwriteTerminationGracePeriodSeconds"
)

// versionFamily is one family of generated cases.
type versionFamily struct {
	name string
	// base names the difference; the families of one base share their seeded source, so their cases
	// differ only in featureGates.
	base  string
	gates map[string]bool // the featureGates of every case (nil: none)
	// minors are the releases whose kubelet accepts gates (nil: every release). The 1.37 gate does not
	// exist before 1.37, and AllowOverwriteTerminationGracePeriodSeconds is locked to false from 1.35
	// (setting it true is a configuration error there).
	minors []int
	gen    func(g *gen, i int) Case
}

var versionFamilies = []versionFamily{
	{name: "sidecar-ephemeral-limits", base: "sidecar", gen: (*gen).sidecarCase},
	{name: "memory-emptydir-sizelimit", base: "memory-emptydir", gen: (*gen).memoryEmptyDirCase},
	{name: "memory-emptydir-sizelimit-gate-off", base: "memory-emptydir", gen: (*gen).memoryEmptyDirCase,
		gates: map[string]bool{gateMemoryBackedVolumes: false}, minors: []int{37}},
	{name: "memory-emptydir-sizelimit-gate-on", base: "memory-emptydir", gen: (*gen).memoryEmptyDirCase,
		gates: map[string]bool{gateMemoryBackedVolumes: true}, minors: []int{37}},
	{name: "soft-grace", base: "soft-grace", gen: (*gen).softGraceCase},
	{name: "soft-grace-gate-off", base: "soft-grace", gen: (*gen).softGraceCase,
		gates: map[string]bool{gateOverwriteGrace: false}},
	{name: "soft-grace-gate-on", base: "soft-grace", gen: (*gen).softGraceCase,
		gates: map[string]bool{gateOverwriteGrace: true}, minors: []int{34}},
}

// familyDifferences are the differences the families must show in the kubelets' own answers (else a
// family stopped exercising its difference): the family's evictions on release a differ from family
// b's on release b.
var familyDifferences = []struct{ what, famA, relA, famB, relB string }{
	{"sidecar ephemeral-storage limits (1.37 vs 1.36)", "sidecar-ephemeral-limits", "v1.37.2", "sidecar-ephemeral-limits", "v1.36.3"},
	{"memory-backed emptyDir sizeLimit (1.37, gate on vs off)", "memory-emptydir-sizelimit-gate-on", "v1.37.2",
		"memory-emptydir-sizelimit-gate-off", "v1.37.2"},
	{"soft grace (1.34, gate on vs off)", "soft-grace-gate-on", "v1.34.4", "soft-grace-gate-off", "v1.34.4"},
}

// familyCases generates n cases of every family that runs against rel, named FAMILY-NNN.
func familyCases(seed int64, n int, rel release) []Case {
	var out []Case
	for _, f := range versionFamilies {
		if f.minors != nil && !slices.Contains(f.minors, rel.Minor) {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(f.base))
		g := &gen{r: rand.New(rand.NewSource(seed ^ int64(h.Sum64())))}
		for i := 0; i < n; i++ {
			c := f.gen(g, i)
			c.Name = fmt.Sprintf("%s-%03d", f.name, i)
			if f.gates != nil {
				c.KubeletConfig = withGates(c.KubeletConfig, f.gates)
			}
			out = append(out, c)
		}
	}
	return out
}

func withGates(raw json.RawMessage, gates map[string]bool) json.RawMessage {
	var kc map[string]any
	if err := json.Unmarshal(raw, &kc); err != nil {
		panic(err)
	}
	kc["featureGates"] = gates
	out, err := json.Marshal(kc)
	if err != nil {
		panic(err)
	}
	return out
}

// familyCase is the frame of a family's case on node n with configuration kc; familySteps adds the steps.
func familyCase(kc map[string]any, n node) Case {
	raw, err := json.Marshal(kc)
	if err != nil {
		panic(err)
	}
	return Case{KubeletConfig: raw, DedicatedImageFs: n.dedicated, SplitContainerFs: n.split,
		StartUnixMilli: startTime.UnixMilli(), DropEvicted: true, Probes: probes()}
}

// familySteps adds nsteps steps 10-30 s apart; stats returns the Summary of a step at stamp.
func (g *gen) familySteps(c *Case, pods []v1.Pod, nsteps int, stats func(stamp time.Time) *statsapi.Summary) {
	var offset int64
	for s := 0; s < nsteps; s++ {
		if s > 0 {
			offset += []int64{10000, 20000, 30000}[g.r.Intn(3)]
		}
		c.Steps = append(c.Steps, Step{OffsetMillis: offset, Pods: pods,
			Summary: stats(startTime.Add(time.Duration(offset) * time.Millisecond))})
	}
}

// podStatsOf is the pods' stats (every pod has stats) on a node at no pressure.
func (g *gen) podStatsOf(n node, pods []v1.Pod, stamp time.Time) *statsapi.Summary {
	sum := g.genSummary(n, cfgInfo{}, famLocal, -1, diskTarget{"node", "bytes"}, map[string]int64{}, stamp, nil, false)
	for i := range pods {
		sum.Pods = append(sum.Pods, g.podStats(&pods[i], stamp, true))
	}
	return sum
}

func stripEphemeralLimits(p *v1.Pod) {
	for _, cs := range [][]v1.Container{p.Spec.Containers, p.Spec.InitContainers} {
		for i := range cs {
			delete(cs[i].Resources.Limits, v1.ResourceEphemeralStorage)
		}
	}
}

// sidecarCase: pods with a restartable init container (sidecar) whose logs and rootfs are at the
// boundary of its ephemeral-storage limit, regular containers with large limits (so the pod's total
// stays under its limit) and no emptyDirs: the container check decides, and only 1.37 checks sidecars.
func (g *gen) sidecarCase(int) Case {
	n := g.genNode()
	kc := map[string]any{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
		"evictionHard": map[string]string{"memory.available": "100Mi"}}
	pods := make([]v1.Pod, 2+g.r.Intn(6))
	for p := range pods {
		pods[p] = g.genPod(p)
		pod := &pods[p]
		pod.Spec.Volumes = nil
		stripEphemeralLimits(pod)
		if g.chance(0.8) {
			for i := range pod.Spec.Containers {
				pod.Spec.Containers[i].Resources.Limits = withEphemeral(pod.Spec.Containers[i].Resources.Limits, "100Gi")
			}
		}
		pod.Spec.InitContainers = nil
		if g.chance(0.3) { // a regular init container with a limit: no check in any release
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: "init-eph",
				Resources: v1.ResourceRequirements{Limits: withEphemeral(nil, g.pick("1Mi", "100Mi"))}})
		}
		if g.chance(0.8) {
			always := v1.ContainerRestartPolicyAlways
			pod.Spec.InitContainers = append(pod.Spec.InitContainers, v1.Container{Name: "sidecar-eph", RestartPolicy: &always,
				Resources: v1.ResourceRequirements{Limits: withEphemeral(nil, g.pick("100Mi", "256Mi", "1Gi", "500M", "0"))}})
		}
	}
	c := familyCase(kc, n)
	g.familySteps(&c, pods, 2+g.r.Intn(2), func(stamp time.Time) *statsapi.Summary {
		sum := g.podStatsOf(n, pods, stamp)
		for i := range sum.Pods {
			g.aimContainer(&pods[i], &sum.Pods[i], "sidecar-eph")
		}
		return sum
	})
	return c
}

func withEphemeral(l v1.ResourceList, q string) v1.ResourceList {
	if l == nil {
		l = v1.ResourceList{}
	}
	l[v1.ResourceEphemeralStorage] = resource.MustParse(q)
	return l
}

// aimContainer puts container name's usage (logs, rootfs or both) at a boundary of its
// ephemeral-storage limit.
func (g *gen) aimContainer(p *v1.Pod, ps *statsapi.PodStats, name string) {
	var limit int64 = -1
	for _, c := range append(append([]v1.Container{}, p.Spec.Containers...), p.Spec.InitContainers...) {
		if q, ok := c.Resources.Limits[v1.ResourceEphemeralStorage]; ok && c.Name == name {
			limit = q.Value()
		}
	}
	for i := range ps.Containers {
		cs := &ps.Containers[i]
		if cs.Name != name || limit < 0 {
			continue
		}
		used := g.near(limit)
		if g.chance(0.3) {
			used = limit + 1 + g.r.Int63n(1<<30)
		}
		switch g.r.Intn(3) {
		case 0:
			cs.Logs, cs.Rootfs = &statsapi.FsStats{UsedBytes: u64(used)}, &statsapi.FsStats{UsedBytes: u64(0)}
		case 1: // rootfs counts only without a dedicated imagefs
			cs.Logs, cs.Rootfs = &statsapi.FsStats{UsedBytes: u64(used / 3)}, &statsapi.FsStats{UsedBytes: u64(used - used/3)}
		default:
			cs.Logs, cs.Rootfs = nil, &statsapi.FsStats{UsedBytes: u64(used)}
		}
	}
}

// memoryEmptyDirCase: pods with a memory-backed emptyDir (and sometimes a disk one) with a sizeLimit,
// usage at its boundaries, and no ephemeral-storage limits: the emptyDir check decides.
func (g *gen) memoryEmptyDirCase(int) Case {
	n := g.genNode()
	kc := map[string]any{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
		"evictionHard": map[string]string{"memory.available": "100Mi"}}
	pods := make([]v1.Pod, 2+g.r.Intn(6))
	for p := range pods {
		pods[p] = g.genPod(p)
		pod := &pods[p]
		stripEphemeralLimits(pod)
		pod.Spec.Overhead = nil
		pod.Spec.Volumes = nil
		sized := func(name string, medium v1.StorageMedium, size string) v1.Volume {
			q := resource.MustParse(size)
			return v1.Volume{Name: name, VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{Medium: medium, SizeLimit: &q}}}
		}
		if g.chance(0.85) {
			pod.Spec.Volumes = append(pod.Spec.Volumes, sized("shm", v1.StorageMediumMemory, g.pick("64Mi", "100Mi", "1Gi", "500M", "0")))
		}
		if g.chance(0.35) {
			pod.Spec.Volumes = append(pod.Spec.Volumes, sized("disk", v1.StorageMediumDefault, g.pick("100Mi", "1Gi")))
		}
	}
	c := familyCase(kc, n)
	g.familySteps(&c, pods, 2+g.r.Intn(2), func(stamp time.Time) *statsapi.Summary {
		sum := g.podStatsOf(n, pods, stamp)
		for i := range sum.Pods {
			for j := range sum.Pods[i].VolumeStats {
				vs := &sum.Pods[i].VolumeStats[j]
				for _, v := range pods[i].Spec.Volumes {
					if v.Name == vs.Name && g.chance(0.8) {
						vs.UsedBytes = u64(g.near(v.EmptyDir.SizeLimit.Value()))
					}
				}
			}
		}
		return sum
	})
	return c
}

// softGraceCase: a soft memory.available threshold met after its grace period (or at once with 0s,
// which makes it a hard threshold), pods whose terminationGracePeriodSeconds is below, at and above
// evictionMaxPodGracePeriod, and no local-storage isolation: the soft eviction's grace decides.
func (g *gen) softGraceCase(int) Case {
	n := g.genNode()
	soft := g.pick("1Gi", "2Gi")
	kc := map[string]any{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
		"evictionHard": map[string]string{"memory.available": "100Mi"},
		"evictionSoft": map[string]string{"memory.available": soft}, "evictionSoftGracePeriod": map[string]string{
			"memory.available": g.pick("0s", "5s", "10s", "10s")}, // 0s makes it a hard threshold (grace 1)
		"evictionMaxPodGracePeriod": []int{10, 30, 60, 300}[g.r.Intn(4)], "enforceNodeAllocatable": []string{},
		"localStorageCapacityIsolation": false}
	pods := make([]v1.Pod, 2+g.r.Intn(6))
	for p := range pods {
		pods[p] = g.genPod(p)
		pods[p].Spec.TerminationGracePeriodSeconds = nil
		if t := []int64{-1, 0, 5, 30, 45, 120, 600}[g.r.Intn(7)]; t >= 0 {
			pods[p].Spec.TerminationGracePeriodSeconds = &t
		}
	}
	q := resource.MustParse(soft)
	softBytes := q.Value()
	c := familyCase(kc, n)
	g.familySteps(&c, pods, 3+g.r.Intn(2), func(stamp time.Time) *statsapi.Summary {
		sum := g.podStatsOf(n, pods, stamp)
		avail := softBytes - 1 - g.r.Int63n(softBytes/2)
		if g.chance(0.15) {
			avail = softBytes + g.r.Int63n(1<<30) // relieved
		}
		sum.Node.Memory.AvailableBytes, sum.Node.Memory.WorkingSetBytes = u64(avail), u64(n.memCap-avail)
		return sum
	})
	return c
}
