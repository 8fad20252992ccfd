package differential

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// family is the kind of pressure a case is built around.
type family int

const (
	famMemory family = iota
	famDisk
	famPID
	famLocal // only local ephemeral-storage limits
)

var startTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// gen generates cases from one seeded source.
type gen struct {
	r *rand.Rand
}

func (g *gen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }
func (g *gen) chance(p float64) bool    { return g.r.Float64() < p }

// node describes the node a case runs on.
type node struct {
	memCap, podsCap             int64
	nodeFsCap, imageFsCap       int64
	nodeInodes, imageInodes     int64
	containerFsCap, containerIn int64
	maxPID                      int64
	dedicated, split            bool
	hasImageFs, hasContainerFs  bool
}

// cfgInfo keeps the raw settings the generator needs to aim at threshold boundaries.
type cfgInfo struct {
	hard, soft, reclaim map[string]string
}

func (g *gen) genCase(i int) Case {
	fam := family(g.r.Intn(4))
	if g.chance(0.1) {
		fam = famLocal
	}
	n := g.genNode()
	info, kc := g.genConfig(fam)
	raw, err := json.Marshal(kc)
	if err != nil {
		panic(err)
	}
	c := Case{
		Name:                                  fmt.Sprintf("case-%04d", i),
		KubeletConfig:                         raw,
		ExperimentalAllocatableIgnoreEviction: g.chance(0.05),
		DedicatedImageFs:                      n.dedicated,
		SplitContainerFs:                      n.split,
		StartUnixMilli:                        startTime.UnixMilli(),
		DropEvicted:                           true,
		Probes:                                probes(),
	}
	npods := 1 + g.r.Intn(12)
	big := g.chance(0.1)
	if big {
		npods = 13 + g.r.Intn(8)
	}
	pods := make([]v1.Pod, npods)
	local := fam == famLocal || g.chance(0.25)
	for p := range pods {
		pods[p] = g.genPod(p)
		if local && g.chance(0.5) {
			g.localLimits(&pods[p])
		}
	}
	if g.chance(0.3) { // active pods in another order than by name: ties then fall differently
		g.r.Shuffle(len(pods), func(a, b int) { pods[a], pods[b] = pods[b], pods[a] })
	}
	second := family(-1)
	if fam != famLocal && g.chance(0.15) {
		second = family(g.r.Intn(3))
	}
	target := g.diskTarget(n)
	levels := map[string]int64{}
	var offset int64
	var prevStamp time.Time
	nsteps := 2 + g.r.Intn(7)
	for s := 0; s < nsteps; s++ {
		if s > 0 {
			offset += []int64{1000, 5000, 10000, 10000, 30000, 60000, 90000, 120000, 300000}[g.r.Intn(9)]
		}
		now := startTime.Add(time.Duration(offset) * time.Millisecond)
		stamp := now
		if s > 0 && g.chance(0.1) {
			stamp = prevStamp // stale stats
		}
		prevStamp = stamp
		st := Step{OffsetMillis: offset, Pods: pods}
		if s > 0 && g.chance(0.05) {
			st.SummaryError = true
			c.Steps = append(c.Steps, st)
			continue
		}
		sum := g.genSummary(n, info, fam, second, target, levels, stamp, pods, big)
		st.Summary = sum
		if (fam == famDisk || second == famDisk) && g.chance(0.3) {
			st.AfterReclaim = g.relieved(sum)
		}
		c.Steps = append(c.Steps, st)
	}
	return c
}

func (g *gen) genNode() node {
	n := node{
		memCap:     []int64{4 << 30, 8 << 30, 16 << 30, 64 << 30}[g.r.Intn(4)] + g.r.Int63n(1<<26),
		nodeFsCap:  []int64{20 << 30, 100 << 30, 500 << 30}[g.r.Intn(3)] + g.r.Int63n(1<<30),
		nodeInodes: []int64{6553600, 1000000, 32768000}[g.r.Intn(3)],
		maxPID:     []int64{32768, 4194304, 100000}[g.r.Intn(3)],
	}
	n.podsCap = n.memCap - n.memCap/10
	switch g.r.Intn(4) {
	case 0, 1: // single filesystem
		n.hasImageFs = g.chance(0.9)
		n.hasContainerFs = n.hasImageFs && g.chance(0.7)
		n.imageFsCap, n.imageInodes = n.nodeFsCap, n.nodeInodes
		n.containerFsCap, n.containerIn = n.nodeFsCap, n.nodeInodes
	case 2: // dedicated imagefs with writable layers
		n.dedicated, n.hasImageFs = true, true
		n.hasContainerFs = g.chance(0.7)
		n.imageFsCap, n.imageInodes = n.nodeFsCap/2+g.r.Int63n(1<<30)+1, n.nodeInodes/2+7
		n.containerFsCap, n.containerIn = n.imageFsCap, n.imageInodes
	default: // dedicated imagefs, writable layers split back onto nodefs
		n.dedicated, n.split, n.hasImageFs, n.hasContainerFs = true, true, true, true
		n.imageFsCap, n.imageInodes = n.nodeFsCap/2+g.r.Int63n(1<<30)+1, n.nodeInodes/2+7
		n.containerFsCap, n.containerIn = n.nodeFsCap, n.nodeInodes
	}
	return n
}

// diskTarget is the filesystem ("node", "image", "container") and resource ("bytes", "inodes") that
// disk pressure hits in this case.
type diskTarget struct{ fs, res string }

func (g *gen) diskTarget(n node) diskTarget {
	fs := "node"
	if n.dedicated && g.chance(0.5) {
		fs = "image"
	}
	res := "bytes"
	if g.chance(0.3) {
		res = "inodes"
	}
	return diskTarget{fs, res}
}

// level picks the available amount of a signal for one step: often the previous level, otherwise a
// boundary of one of the signal's thresholds (threshold-1, threshold, threshold+minReclaim-1, ...) or
// a random amount.
func (g *gen) level(key string, capacity int64, info cfgInfo, sigs []string, levels map[string]int64) int64 {
	if prev, ok := levels[key]; ok && g.chance(0.4) {
		return prev
	}
	var bounds []int64
	for _, sig := range sigs {
		mr, _ := resolve(info.reclaim[sig], capacity)
		for _, v := range []string{info.hard[sig], info.soft[sig]} {
			if t, ok := resolve(v, capacity); ok {
				bounds = append(bounds, t-1, t, t+1, t/2, t+mr-1, t+mr)
			}
		}
	}
	var out int64
	switch {
	case len(bounds) > 0 && g.chance(0.7):
		out = bounds[g.r.Intn(len(bounds))]
	case g.chance(0.5):
		out = capacity / 2
	default:
		out = g.r.Int63n(capacity/4 + 1)
	}
	out = max(0, min(out, capacity))
	levels[key] = out
	return out
}

func u64(v int64) *uint64 {
	x := uint64(max(v, 0))
	return &x
}

func mt(t time.Time) metav1.Time { return metav1.NewTime(t) }

func (g *gen) genSummary(n node, info cfgInfo, fam, second family, target diskTarget, levels map[string]int64,
	stamp time.Time, pods []v1.Pod, big bool) *statsapi.Summary {
	under := func(f family) bool { return f == fam || f == second }
	memAvail, podsAvail := n.memCap*6/10, n.podsCap*6/10
	if under(famMemory) {
		memAvail = g.level("mem", n.memCap, info, []string{"memory.available"}, levels)
		podsAvail = g.level("pods", n.podsCap, info, []string{"memory.available"}, levels)
	}
	pidAvail := n.maxPID * 6 / 10
	if under(famPID) {
		pidAvail = g.level("pid", n.maxPID, info, []string{"pid.available"}, levels)
	}
	fsStats := func(fs string, capacity, inodes int64, sigs, inodeSigs []string) *statsapi.FsStats {
		avail, free := capacity*6/10, inodes*6/10
		if under(famDisk) && target.fs == fs {
			if target.res == "bytes" {
				avail = g.level(fs+"-bytes", capacity, info, sigs, levels)
			} else {
				free = g.level(fs+"-inodes", inodes, info, inodeSigs, levels)
			}
		}
		return &statsapi.FsStats{Time: mt(stamp), AvailableBytes: u64(avail), CapacityBytes: u64(capacity),
			UsedBytes: u64(capacity - avail), InodesFree: u64(free), Inodes: u64(inodes), InodesUsed: u64(inodes - free)}
	}
	nodeFs := fsStats("node", n.nodeFsCap, n.nodeInodes, []string{"nodefs.available"}, []string{"nodefs.inodesFree"})
	sum := &statsapi.Summary{Node: statsapi.NodeStats{
		NodeName: "node",
		Memory: &statsapi.MemoryStats{Time: mt(stamp), AvailableBytes: u64(memAvail),
			WorkingSetBytes: u64(n.memCap - memAvail), UsageBytes: u64(n.memCap - memAvail + 1<<28)},
		SystemContainers: []statsapi.ContainerStats{{Name: "pods", Memory: &statsapi.MemoryStats{Time: mt(stamp),
			AvailableBytes: u64(podsAvail), WorkingSetBytes: u64(n.podsCap - podsAvail), UsageBytes: u64(n.podsCap - podsAvail)}}},
		Fs:     nodeFs,
		Rlimit: &statsapi.RlimitStats{Time: mt(stamp), MaxPID: i64(n.maxPID), NumOfRunningProcesses: i64(n.maxPID - pidAvail)},
	}}
	if g.chance(0.03) {
		sum.Node.SystemContainers = nil // no allocatable observation
	}
	if n.hasImageFs {
		rt := &statsapi.RuntimeStats{}
		if n.dedicated {
			rt.ImageFs = fsStats("image", n.imageFsCap, n.imageInodes, []string{"imagefs.available"}, []string{"imagefs.inodesFree"})
		} else {
			c := *nodeFs
			rt.ImageFs = &c
		}
		if n.hasContainerFs {
			switch {
			case n.split:
				c := *nodeFs
				rt.ContainerFs = &c
			default:
				c := *rt.ImageFs
				rt.ContainerFs = &c
			}
		}
		sum.Node.Runtime = rt
	}
	for i := range pods {
		if !big && g.chance(0.1) {
			continue // no stats for this pod
		}
		ps := g.podStats(&pods[i], stamp, big)
		g.aimLocal(&pods[i], &ps)
		sum.Pods = append(sum.Pods, ps)
	}
	return sum
}

// relieved is the summary after a node-level reclaim: either every filesystem is freed to 90 %, or
// each one gains a random 0-15 % of its capacity (which may or may not end the pressure).
func (g *gen) relieved(s *statsapi.Summary) *statsapi.Summary {
	data, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	out := &statsapi.Summary{}
	if err := json.Unmarshal(data, out); err != nil {
		panic(err)
	}
	all := g.chance(0.5)
	kb, ki := int64(g.r.Intn(16)), int64(g.r.Intn(16)) // the same share on every filesystem
	free := func(fs *statsapi.FsStats) {
		if fs == nil || fs.CapacityBytes == nil || fs.Inodes == nil || fs.AvailableBytes == nil || fs.InodesFree == nil {
			return
		}
		capacity, inodes := int64(*fs.CapacityBytes), int64(*fs.Inodes)
		if all {
			fs.AvailableBytes, fs.InodesFree = u64(capacity*9/10), u64(inodes*9/10)
			return
		}
		fs.AvailableBytes = u64(min(capacity, int64(*fs.AvailableBytes)+capacity*kb/100))
		fs.InodesFree = u64(min(inodes, int64(*fs.InodesFree)+inodes*ki/100))
	}
	free(out.Node.Fs)
	if rt := out.Node.Runtime; rt != nil {
		free(rt.ImageFs)
		free(rt.ContainerFs)
	}
	return out
}

func probes() []v1.Pod {
	prio := int32(2000000000)
	return []v1.Pod{
		{ObjectMeta: metav1.ObjectMeta{Name: "probe-besteffort", Namespace: "default", UID: "probe-1"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "probe-besteffort-tolerating", Namespace: "default", UID: "probe-2"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}, Tolerations: []v1.Toleration{{
				Key: "node.kubernetes.io/memory-pressure", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "probe-burstable", Namespace: "default", UID: "probe-3"},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
				Requests: v1.ResourceList{v1.ResourceMemory: resource.MustParse("100Mi")}}}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "probe-critical", Namespace: "kube-system", UID: "probe-4"},
			Spec: v1.PodSpec{Priority: &prio, Containers: []v1.Container{{Name: "c"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "probe-static", Namespace: "kube-system", UID: "probe-5",
			Annotations: map[string]string{"kubernetes.io/config.source": "file"}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "probe-spoofed-static", Namespace: "default", UID: "probe-6",
			Annotations: map[string]string{"kubernetes.io/config.source": "api", spoofAnnotation: "file"}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c"}}}},
	}
}

func uid(i int) types.UID { return types.UID(fmt.Sprintf("uid-%02d", i)) }

func i64(v int64) *int64 { return &v }
