package signal

// MemoryStat is the part of a memory.stat (a pod's cgroup, the pods cgroup or the node) that says how
// much of the memory in use the kernel could reclaim: the file LRU lists, what of them is dirty or under
// writeback, shmem, and the workingset counters. Sizes are bytes; the workingset counters are cumulative
// page counts (multiply by PageSize). A nil field was not reported by this kernel or cgroup version
// (cgroup v1 has no per-cgroup workingset_activate): absent, never zero.
//
// active_file and inactive_file hold page cache only: shmem and tmpfs pages live on the anonymous LRU
// lists, so Shmem is not part of them and is reported for explanation only.
type MemoryStat struct {
	ActiveFile, InactiveFile *uint64
	Dirty, Writeback         *uint64
	Shmem                    *uint64
	// WorkingsetRefaultFile counts file pages faulted back in after reclaim (workingset_refault_file, or
	// workingset_refault before Linux 5.9, which tracked file pages only).
	WorkingsetRefaultFile *uint64
	// WorkingsetActivateFile counts the refaulted file pages that were part of the working set and went
	// straight back to the active list (workingset_activate_file, or workingset_activate before 5.9).
	WorkingsetActivateFile *uint64
	// PageSize is the size of the pages the workingset counters count; 0 when unknown.
	PageSize uint64
}

// FileKnown reports whether both file LRU sizes are known.
func (m *MemoryStat) FileKnown() bool {
	return m != nil && m.ActiveFile != nil && m.InactiveFile != nil
}
