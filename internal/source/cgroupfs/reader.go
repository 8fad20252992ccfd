package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// ErrNoPodsCgroup reports that allocatableMemory.available cannot be observed because there is no pods cgroup.
var ErrNoPodsCgroup = errors.New("no pods cgroup")

// ErrUnlimited reports that allocatableMemory.available cannot be observed because the pods cgroup has no
// limit (the kubelet leaves availableBytes nil in that case).
var ErrUnlimited = errors.New("pods cgroup memory limit is unlimited")

// Reader computes memory signals from a detected Layout.
type Reader struct {
	Layout Layout
	// PageSize is the size of the pages memory.stat's workingset counters count; 0 means the host's
	// (os.Getpagesize).
	PageSize uint64
}

func (r *Reader) pageSize() uint64 {
	if r.PageSize == 0 {
		return uint64(os.Getpagesize())
	}
	return r.PageSize
}

// NodeMemoryStat returns the reclaim fields of the root cgroup's memory.stat (v1: the total_ counters).
func (r *Reader) NodeMemoryStat() (signal.MemoryStat, error) {
	m, err := r.Layout.ReadMemory("")
	if err != nil {
		return signal.MemoryStat{}, fmt.Errorf("node memory.stat: %w", err)
	}
	return ReclaimStat(m.Stat, r.Layout.Version, r.pageSize()), nil
}

// PodsMemoryStat returns the reclaim fields of the pods cgroup's memory.stat, or an error wrapping
// ErrNoPodsCgroup.
func (r *Reader) PodsMemoryStat() (signal.MemoryStat, error) {
	if r.Layout.Driver == DriverNone {
		return signal.MemoryStat{}, fmt.Errorf("pods memory.stat: %w", ErrNoPodsCgroup)
	}
	m, err := r.Layout.ReadMemory(r.Layout.PodsCgroup)
	if err != nil {
		return signal.MemoryStat{}, fmt.Errorf("pods memory.stat: %w", err)
	}
	return ReclaimStat(m.Stat, r.Layout.Version, r.pageSize()), nil
}

// NodeMemory returns memory.available = memTotal − root working set, capacity memTotal.
func (r *Reader) NodeMemory(now time.Time, memTotal uint64) (signal.Observation, error) {
	m, err := r.Layout.ReadMemory("")
	if err != nil {
		return signal.Observation{}, fmt.Errorf("memory.available: %w", err)
	}
	return signal.Observation{
		Available: int64(memTotal) - int64(m.WorkingSet()),
		Capacity:  int64(memTotal),
		Time:      now,
		Source:    signal.SourceCgroupfs,
	}, nil
}

// AllocatableMemory returns allocatableMemory.available = pods limit − pods working set, capacity = the
// limit. It returns an error wrapping ErrNoPodsCgroup or ErrUnlimited when there is nothing to observe.
func (r *Reader) AllocatableMemory(now time.Time) (signal.Observation, error) {
	if r.Layout.Driver == DriverNone {
		return signal.Observation{}, fmt.Errorf("allocatableMemory.available: %w", ErrNoPodsCgroup)
	}
	m, err := r.Layout.ReadMemory(r.Layout.PodsCgroup)
	if err != nil {
		return signal.Observation{}, fmt.Errorf("allocatableMemory.available: %w", err)
	}
	if m.Limit == nil {
		return signal.Observation{}, fmt.Errorf("allocatableMemory.available: %s: %w", r.Layout.PodsCgroup, ErrUnlimited)
	}
	return signal.Observation{
		Available: int64(*m.Limit) - int64(m.WorkingSet()),
		Capacity:  int64(*m.Limit),
		Time:      now,
		Source:    signal.SourceCgroupfs,
	}, nil
}

// Pods returns per-pod working set, memory.stat reclaim fields, process and thread count keyed by pod UID. A pod whose files cannot be read
// is left out and its error joined into the returned error; the other pods are still returned.
func (r *Reader) Pods(now time.Time) (map[string]signal.PodStats, error) {
	cgs, err := r.Layout.PodCgroups()
	if err != nil {
		return nil, fmt.Errorf("list pod cgroups: %w", err)
	}
	out := make(map[string]signal.PodStats, len(cgs))
	var errs []error
	scratch := &podScratch{buf: make([]byte, 0, 8192)}
	for _, cg := range cgs {
		ps, err := r.pod(cg, now, scratch)
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", cg.UID, err))
			continue
		}
		out[cg.UID] = ps
	}
	return out, errors.Join(errs...)
}

func (r *Reader) pod(cg PodCgroup, now time.Time, scratch *podScratch) (signal.PodStats, error) {
	ws, ms, err := scratch.podMemory(r.Layout, cg.Rel, r.pageSize())
	if err != nil {
		return signal.PodStats{}, err
	}
	tc, err := r.Layout.tasks(cg.Rel, scratch.buf[:0])
	if err != nil {
		return signal.PodStats{}, err
	}
	return signal.PodStats{UID: cg.UID, Time: now, MemoryWorkingSet: signal.Uint64(ws), Memory: &ms,
		ProcessCount: signal.Uint64(tc.Processes), ThreadCount: tc.Threads}, nil
}

// Pressure returns the PSI of the pods cgroup (Scope = its name) when the cgroup2 hierarchy has the
// memory controller; on a hybrid host the cgroup2 files are node-wide and procfs already reports them,
// so there is nothing to return. Missing PSI files (kernel without CONFIG_PSI) are skipped.
func (r *Reader) Pressure(now time.Time) ([]signal.Pressure, error) {
	l := r.Layout
	if l.Version != V2 || l.Driver == DriverNone {
		return nil, nil
	}
	var out []signal.Pressure
	for _, res := range procfs.PSIResources {
		p, err := readFile(filepath.Join(l.Memory, l.PodsCgroup, res+".pressure"), procfs.ParsePSI)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, signal.Pressure{Scope: l.PodsCgroup, Resource: res, Some: p.Some, Full: p.Full, Time: now})
	}
	return out, nil
}
