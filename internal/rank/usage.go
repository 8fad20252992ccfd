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

// DiskUsage returns the pod's usage of disk signal sig under layout, as the kubelet's rank function
// for sig measures it (bytes, or inodes for the inode signals), and whether any of the parts it counts
// is measured (a nil part counts as 0 in the kubelet's sums; none measured is absent, not 0). ok is
// false for a signal that is not a disk signal or whose parts count nothing (split imagefs).
func DiskUsage(sig signal.Signal, layout signal.FilesystemLayout, c Candidate) (usage int64, ok bool) {
	m, disk := diskStatsFor(sig, layout)
	if !disk || c.Stats == nil {
		return 0, false
	}
	inodes := sig.Resource() == signal.ResourceInodes
	measured := func(bytes, count *uint64) bool {
		if inodes {
			return count != nil
		}
		return bytes != nil
	}
	for _, cs := range c.Stats.Containers {
		ok = ok || (m.root && measured(cs.RootfsUsed, cs.RootfsInodes)) || (m.logs && measured(cs.LogsUsed, cs.LogsInodes))
	}
	if m.localVolumes {
		for _, v := range c.Volumes {
			if vs, found := volumeStats(c.Stats, v.Name); found && v.Local() {
				ok = ok || measured(vs.UsedBytes, vs.InodesUsed)
			}
		}
	}
	if !ok {
		return 0, false
	}
	return diskUsage(c, m, inodes), true
}
