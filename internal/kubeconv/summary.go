package kubeconv

import (
	"sort"
	"time"

	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/kube-pressure/pressure/internal/signal"
)

// podsSystemContainer is the Summary system container of the pods cgroup.
const podsSystemContainer = "pods"

// Snapshot converts a Summary into a Snapshot like the kubelet's makeSignalObservations:
//
//   - memory.available: node.memory available, capacity available+workingSet;
//   - allocatableMemory.available: the same from the "pods" system container;
//   - nodefs/imagefs/containerfs .available and .inodesFree: available/capacity bytes and
//     inodesFree/inodes of node.fs, runtime.imageFs, runtime.containerFs;
//   - pid.available: rlimit maxpid − curproc, capacity maxpid.
//
// A nil pointer anywhere gives no observation. Unsigned values are converted to int64 as the
// kubelet does (wrapping above 2^63). Per-pod stats are keyed by pod UID (a later duplicate wins,
// as in the kubelet's cachedStatsFunc). PSI records come from node and the pods container.
func Snapshot(summary *statsv1alpha1.Summary) signal.Snapshot {
	s := signal.Snapshot{Observations: map[signal.Signal]signal.Observation{}, Pods: map[string]signal.PodStats{}}
	if summary == nil {
		return s
	}
	node := summary.Node
	pods := podsContainer(node.SystemContainers)
	addMemory(s.Observations, signal.MemoryAvailable, node.Memory)
	if pods != nil {
		addMemory(s.Observations, signal.AllocatableMemoryAvailable, pods.Memory)
	}
	addFs(s.Observations, signal.NodeFsAvailable, signal.NodeFsInodesFree, node.Fs)
	if rt := node.Runtime; rt != nil {
		addFs(s.Observations, signal.ImageFsAvailable, signal.ImageFsInodesFree, rt.ImageFs)
		addFs(s.Observations, signal.ContainerFsAvailable, signal.ContainerFsInodesFree, rt.ContainerFs)
	}
	if rl := node.Rlimit; rl != nil && rl.MaxPID != nil && rl.NumOfRunningProcesses != nil {
		s.Observations[signal.PIDAvailable] = observation(*rl.MaxPID-*rl.NumOfRunningProcesses, *rl.MaxPID, rl.Time.Time)
	}
	for i := range summary.Pods {
		ps := podStats(&summary.Pods[i])
		s.Pods[ps.UID] = ps
	}
	s.PSI = psi(node, pods)
	s.Filesystems = Layout(summary)
	return s
}

func observation(available, capacity int64, at time.Time) signal.Observation {
	return signal.Observation{Available: available, Capacity: capacity, Time: at, Source: signal.SourceSummary}
}

func podsContainer(cs []statsv1alpha1.ContainerStats) *statsv1alpha1.ContainerStats {
	for i := range cs {
		if cs[i].Name == podsSystemContainer {
			return &cs[i]
		}
	}
	return nil
}

func addMemory(obs map[signal.Signal]signal.Observation, sig signal.Signal, m *statsv1alpha1.MemoryStats) {
	if m == nil || m.AvailableBytes == nil || m.WorkingSetBytes == nil {
		return
	}
	obs[sig] = observation(int64(*m.AvailableBytes), int64(*m.AvailableBytes+*m.WorkingSetBytes), m.Time.Time)
}

func addFs(obs map[signal.Signal]signal.Observation, bytesSig, inodesSig signal.Signal, fs *statsv1alpha1.FsStats) {
	if fs == nil {
		return
	}
	if fs.AvailableBytes != nil && fs.CapacityBytes != nil {
		obs[bytesSig] = observation(int64(*fs.AvailableBytes), int64(*fs.CapacityBytes), fs.Time.Time)
	}
	if fs.InodesFree != nil && fs.Inodes != nil {
		obs[inodesSig] = observation(int64(*fs.InodesFree), int64(*fs.Inodes), fs.Time.Time)
	}
}

// Layout guesses the filesystem layout from a Summary, which does not say it directly (the kubelet
// asks cAdvisor and the runtime for the devices): the image filesystem is dedicated when
// runtime.imageFs exists and its capacity or available bytes differ from node.fs; writable layers
// are split from images when runtime.containerFs exists and its capacity or available bytes differ
// from runtime.imageFs. Two distinct filesystems of identical size and free space look shared.
func Layout(summary *statsv1alpha1.Summary) signal.FilesystemLayout {
	rt := summary.Node.Runtime
	if rt == nil || rt.ImageFs == nil {
		return signal.FilesystemLayout{}
	}
	return signal.FilesystemLayout{
		DedicatedImageFs: differ(rt.ImageFs, summary.Node.Fs),
		SplitContainerFs: rt.ContainerFs != nil && differ(rt.ContainerFs, rt.ImageFs),
	}
}

func differ(a, b *statsv1alpha1.FsStats) bool {
	if b == nil {
		return true
	}
	return !sameUint(a.CapacityBytes, b.CapacityBytes) || !sameUint(a.AvailableBytes, b.AvailableBytes)
}

func sameUint(a, b *uint64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func podStats(p *statsv1alpha1.PodStats) signal.PodStats {
	ps := signal.PodStats{UID: p.PodRef.UID, Namespace: p.PodRef.Namespace, Name: p.PodRef.Name}
	if p.Memory != nil {
		ps.MemoryWorkingSet = copyUint(p.Memory.WorkingSetBytes)
		ps.Time = p.Memory.Time.Time
	}
	if p.ProcessStats != nil {
		ps.ProcessCount = copyUint(p.ProcessStats.ProcessCount)
	}
	if e := p.EphemeralStorage; e != nil {
		ps.EphemeralStorageUsed = copyUint(e.UsedBytes)
		ps.EphemeralStorageInodes = copyUint(e.InodesUsed)
		if ps.Time.IsZero() {
			ps.Time = e.Time.Time
		}
	}
	for i := range p.Containers {
		ps.Containers = append(ps.Containers, containerStats(&p.Containers[i]))
	}
	for i := range p.VolumeStats {
		v := &p.VolumeStats[i]
		ps.Volumes = append(ps.Volumes, signal.VolumeStats{Name: v.Name, UsedBytes: copyUint(v.UsedBytes),
			InodesUsed: copyUint(v.InodesUsed)})
	}
	return ps
}

func containerStats(c *statsv1alpha1.ContainerStats) signal.ContainerStats {
	cs := signal.ContainerStats{Name: c.Name}
	if c.Memory != nil {
		cs.MemoryWorkingSet = copyUint(c.Memory.WorkingSetBytes)
	}
	if c.Rootfs != nil {
		cs.RootfsUsed, cs.RootfsInodes = copyUint(c.Rootfs.UsedBytes), copyUint(c.Rootfs.InodesUsed)
	}
	if c.Logs != nil {
		cs.LogsUsed, cs.LogsInodes = copyUint(c.Logs.UsedBytes), copyUint(c.Logs.InodesUsed)
	}
	return cs
}

func copyUint(p *uint64) *uint64 {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// psi collects the node's and the pods container's PSI records, sorted by scope then resource.
func psi(node statsv1alpha1.NodeStats, pods *statsv1alpha1.ContainerStats) []signal.Pressure {
	var out []signal.Pressure
	out = appendPSI(out, "node", node.CPU, node.Memory, node.IO)
	if pods != nil {
		out = appendPSI(out, podsSystemContainer, pods.CPU, pods.Memory, pods.IO)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Scope != out[j].Scope {
			return out[i].Scope < out[j].Scope
		}
		return out[i].Resource < out[j].Resource
	})
	return out
}

func appendPSI(out []signal.Pressure, scope string, cpu *statsv1alpha1.CPUStats, mem *statsv1alpha1.MemoryStats,
	io *statsv1alpha1.IOStats) []signal.Pressure {
	if cpu != nil && cpu.PSI != nil {
		out = append(out, pressure(scope, "cpu", cpu.PSI, cpu.Time.Time))
	}
	if mem != nil && mem.PSI != nil {
		out = append(out, pressure(scope, "memory", mem.PSI, mem.Time.Time))
	}
	if io != nil && io.PSI != nil {
		out = append(out, pressure(scope, "io", io.PSI, io.Time.Time))
	}
	return out
}

func pressure(scope, res string, p *statsv1alpha1.PSIStats, at time.Time) signal.Pressure {
	full := line(p.Full)
	return signal.Pressure{Scope: scope, Resource: res, Some: line(p.Some), Full: &full, Time: at}
}

func line(d statsv1alpha1.PSIData) signal.PressureLine {
	return signal.PressureLine{Avg10: d.Avg10, Avg60: d.Avg60, Avg300: d.Avg300, Total: d.Total}
}
