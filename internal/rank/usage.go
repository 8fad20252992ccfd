package rank

import "github.com/kube-pressure/pressure/internal/signal"

// fsStats names the parts of a pod's disk usage the kubelet measures for one disk signal
// (kubelet fsStatsType: root, logs, localVolumeSource; "images" contributes nothing).
type fsStats struct {
	root, logs, localVolumes bool
}

// diskStatsFor returns which parts of pod disk usage count for sig under layout, as the kubelet's
// buildSignalToRankFunc does. ok is false for non-disk signals.
func diskStatsFor(sig signal.Signal, layout signal.FilesystemLayout) (fsStats, bool) {
	all := fsStats{root: true, logs: true, localVolumes: true}
	nodefs := fsStats{logs: true, localVolumes: true}
	switch {
	case !layout.DedicatedImageFs:
		nodefs = all
	case layout.SplitContainerFs:
		nodefs = all
	}
	var imagefs fsStats // split layout: images only, which podDiskUsage ignores
	switch {
	case !layout.DedicatedImageFs:
		imagefs = all
	case !layout.SplitContainerFs:
		imagefs = fsStats{root: true}
	}
	switch sig {
	case signal.NodeFsAvailable, signal.NodeFsInodesFree:
		return nodefs, true
	case signal.ImageFsAvailable, signal.ImageFsInodesFree:
		return imagefs, true
	case signal.ContainerFsAvailable, signal.ContainerFsInodesFree:
		if layout.DedicatedImageFs && !layout.SplitContainerFs {
			return imagefs, true
		}
		return nodefs, true
	}
	return fsStats{}, false
}

// diskUsage returns the pod's usage (bytes, or inodes when inodes is true) of the measured parts.
// Missing values count as 0, as in the kubelet's diskUsage/inodeUsage.
func diskUsage(c Candidate, m fsStats, inodes bool) int64 {
	if c.Stats == nil {
		return 0
	}
	var total int64
	pick := func(bytes, count *uint64) {
		v := bytes
		if inodes {
			v = count
		}
		if v != nil {
			total += int64(*v)
		}
	}
	for _, cs := range c.Stats.Containers {
		if m.root {
			pick(cs.RootfsUsed, cs.RootfsInodes)
		}
		if m.logs {
			pick(cs.LogsUsed, cs.LogsInodes)
		}
	}
	if m.localVolumes {
		for _, v := range c.Volumes {
			if !v.Local() {
				continue
			}
			if vs, ok := volumeStats(c.Stats, v.Name); ok {
				pick(vs.UsedBytes, vs.InodesUsed)
			}
		}
	}
	return total
}

// volumeStats returns the first stats entry named name.
func volumeStats(s *signal.PodStats, name string) (signal.VolumeStats, bool) {
	for _, vs := range s.Volumes {
		if vs.Name == name {
			return vs, true
		}
	}
	return signal.VolumeStats{}, false
}

// memoryUsage is the pod's working set (0 when not measured).
func memoryUsage(c Candidate) int64 {
	if c.Stats == nil || c.Stats.MemoryWorkingSet == nil {
		return 0
	}
	return int64(*c.Stats.MemoryWorkingSet)
}

// processCount is the pod's process count (0 when not measured).
func processCount(c Candidate) uint64 {
	if c.Stats == nil || c.Stats.ProcessCount == nil {
		return 0
	}
	return *c.Stats.ProcessCount
}
