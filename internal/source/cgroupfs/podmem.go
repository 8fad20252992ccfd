package cgroupfs

import (
	"fmt"
	"path/filepath"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/parse"
)

// podScratch is what Reader.Pods reuses from one pod to the next: one read buffer and the picked
// memory.stat values, so that a pod's memory read allocates only its result.
type podScratch struct {
	buf  []byte
	vals [16]uint64 // by the index of the version's statKeys.list()
}

// list returns every key of k, each field's keys in preference order, fields in MemoryStat's order.
func (k statKeys) list() []string {
	var out []string
	for _, f := range [][]string{k.activeFile, k.inactiveFile, k.dirty, k.writeback, k.shmem, k.refault, k.activate} {
		out = append(out, f...)
	}
	return out
}

var (
	v1StatList = v1StatKeys.list()
	v2StatList = v2StatKeys.list()
)

// podMemory reads cgroup rel's working set and the reclaim fields of its memory.stat as ReadMemory and
// ReclaimStat give them, with ReadMemory's errors, reading the usage and memory.stat only (a pod's limit
// is not used) and picking from memory.stat only the reclaim keys.
func (p *podScratch) podMemory(l Layout, rel string, pageSize uint64) (uint64, signal.MemoryStat, error) {
	dir := filepath.Join(l.Memory, rel)
	usageFile, keys, k := "memory.current", v2StatList, v2StatKeys
	if l.Version == V1 {
		usageFile, keys, k = "memory.usage_in_bytes", v1StatList, v1StatKeys
	}
	usagePath := filepath.Join(dir, usageFile)
	b, err := readAllInto(usagePath, p.buf[:0])
	if err != nil {
		return 0, signal.MemoryStat{}, fmt.Errorf("cgroupfs: %w", err)
	}
	p.buf = b[:0]
	usage, err := parse.SingleUintBytes(b, usagePath)
	if err != nil {
		return 0, signal.MemoryStat{}, err
	}
	statPath := filepath.Join(dir, "memory.stat")
	if b, err = readAllInto(statPath, p.buf[:0]); err != nil {
		return 0, signal.MemoryStat{}, fmt.Errorf("cgroupfs: %w", err)
	}
	p.buf = b[:0]
	found, err := parse.PickKeyValues(b, statPath, keys, p.vals[:])
	if err != nil {
		return 0, signal.MemoryStat{}, err
	}
	picked := func(names []string) *uint64 { return pickedFirst(keys, p.vals[:], found, names) }
	inactive := picked(k.inactiveFile)
	if inactive == nil {
		return 0, signal.MemoryStat{}, &parse.Error{Path: statPath, Value: k.inactiveFile[0], Err: parse.ErrMissing}
	}
	ms := signal.MemoryStat{ActiveFile: picked(k.activeFile), InactiveFile: inactive, Dirty: picked(k.dirty),
		Writeback: picked(k.writeback), Shmem: picked(k.shmem), WorkingsetRefaultFile: picked(k.refault),
		WorkingsetActivateFile: picked(k.activate), PageSize: pageSize}
	return Memory{Usage: usage, InactiveFile: *inactive}.WorkingSet(), ms, nil
}

// pickedFirst is first over picked values: the value of the first of names that keys found, or nil.
func pickedFirst(keys []string, vals []uint64, found uint64, names []string) *uint64 {
	for _, n := range names {
		for i, k := range keys {
			if k == n && found&(1<<i) != 0 {
				v := vals[i]
				return &v
			}
		}
	}
	return nil
}
