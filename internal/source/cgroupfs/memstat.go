package cgroupfs

// The reclaim fields of memory.stat. cgroup v1 (https://docs.kernel.org/admin-guide/cgroup-v1/memory.html,
// section 5.2) prints each counter of the cgroup and, prefixed "total_", of its whole subtree: pressure
// reads the hierarchical ones ("total_active_file 959098880", "total_dirty 94593024",
// "total_workingset_refault_file 284866"; v1 has no workingset_activate). cgroup v2
// (https://docs.kernel.org/admin-guide/cgroup-v2.html, memory.stat) is hierarchical already and names
// dirty and writeback file_dirty and file_writeback ("workingset_activate_file 184921"). Before Linux 5.9
// the workingset counters had no _file suffix (they counted file pages only).

import (
	"github.com/kube-pressure/pressure/internal/signal"
)

// statKeys are the memory.stat keys of each MemoryStat field per cgroup version, preferred first.
type statKeys struct {
	activeFile, inactiveFile, dirty, writeback, shmem, refault, activate []string
}

var (
	v1StatKeys = statKeys{
		activeFile: []string{"total_active_file"}, inactiveFile: []string{"total_inactive_file"},
		dirty: []string{"total_dirty"}, writeback: []string{"total_writeback"}, shmem: []string{"total_shmem"},
		refault:  []string{"total_workingset_refault_file", "total_workingset_refault"},
		activate: []string{"total_workingset_activate_file", "total_workingset_activate"},
	}
	v2StatKeys = statKeys{
		activeFile: []string{"active_file"}, inactiveFile: []string{"inactive_file"},
		dirty: []string{"file_dirty"}, writeback: []string{"file_writeback"}, shmem: []string{"shmem"},
		refault:  []string{"workingset_refault_file", "workingset_refault"},
		activate: []string{"workingset_activate_file", "workingset_activate"},
	}
)

// ReclaimStat picks the reclaim fields of a parsed memory.stat of cgroup version v. A key the file does
// not have leaves its field nil; pageSize is copied into the result.
func ReclaimStat(stat map[string]uint64, v Version, pageSize uint64) signal.MemoryStat {
	k := v2StatKeys
	if v == V1 {
		k = v1StatKeys
	}
	return signal.MemoryStat{
		ActiveFile: first(stat, k.activeFile), InactiveFile: first(stat, k.inactiveFile),
		Dirty: first(stat, k.dirty), Writeback: first(stat, k.writeback), Shmem: first(stat, k.shmem),
		WorkingsetRefaultFile: first(stat, k.refault), WorkingsetActivateFile: first(stat, k.activate),
		PageSize: pageSize,
	}
}

// first returns the value of the first of keys present in stat, or nil.
func first(stat map[string]uint64, keys []string) *uint64 {
	for _, k := range keys {
		if v, ok := stat[k]; ok {
			return &v
		}
	}
	return nil
}

// WithVmstat fills the workingset counters a memory.stat lacks from the node's /proc/vmstat
// (workingset_refault_file, workingset_activate_file): on cgroup v1 the root memory.stat has no
// workingset_activate. Counters the stat has are kept.
func WithVmstat(m signal.MemoryStat, vmstat map[string]uint64) signal.MemoryStat {
	if m.WorkingsetRefaultFile == nil {
		m.WorkingsetRefaultFile = first(vmstat, []string{"workingset_refault_file", "workingset_refault"})
	}
	if m.WorkingsetActivateFile == nil {
		m.WorkingsetActivateFile = first(vmstat, []string{"workingset_activate_file", "workingset_activate"})
	}
	return m
}
