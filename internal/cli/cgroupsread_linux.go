//go:build linux

package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// cgroupSampler reads the node's cgroups as pressure-agent does: the layout found by the agent's
// detector (cgroup v1 or v2, the kubepods or kubepods.slice pods cgroup) and the agent's reader.
type cgroupSampler struct {
	reader *cgroupfs.Reader
	proc   *procfs.Reader
	// afterPods, when set, runs between the pods' read and the signals' (a test frees memory there).
	afterPods func()
}

// newCgroupSampler detects the cgroup layout under cgroupRoot; procRoot gives MemTotal (memory.available).
func newCgroupSampler(cgroupRoot, procRoot string) (*cgroupSampler, error) {
	layout, err := cgroupfs.Detector{Root: cgroupRoot}.Detect()
	if err != nil {
		return nil, fmt.Errorf("--local: %w", err)
	}
	return &cgroupSampler{reader: &cgroupfs.Reader{Layout: layout}, proc: procfs.NewReader(procRoot)}, nil
}

// driver is the pods cgroup's driver found ("" for none).
func (s *cgroupSampler) driver() string { return string(s.reader.Layout.Driver) }

// layout describes the tree read.
func (s *cgroupSampler) layout() string { return s.reader.Layout.String() }

// sample reads every pod cgroup, then the pods cgroup and the signals, stamped now: the agent's order
// (source.ReadPodsFirst), so that a pod freeing its memory during the read is not seen freed while the
// signals still count it (simulate would credit it nothing and evict the next pod). What cannot be read
// is left out and its error kept in the sample.
func (s *cgroupSampler) sample(now time.Time) CgroupSample {
	x := CgroupSample{Time: now, Pods: map[string]CgroupMemory{}}
	fail := func(err error) { x.Errors = append(x.Errors, err.Error()) }
	l := s.reader.Layout
	if l.Driver != cgroupfs.DriverNone {
		s.readPods(&x, fail)
	}
	if s.afterPods != nil {
		s.afterPods()
	}
	if total, err := s.proc.MemTotal(); err != nil {
		fail(fmt.Errorf("memory.available: %w", err))
	} else if o, err := s.reader.NodeMemory(now, total); err != nil {
		fail(err)
	} else {
		x.MemoryAvailable = signalValue(o)
	}
	if o, err := s.reader.AllocatableMemory(now); errors.Is(err, cgroupfs.ErrNoPodsCgroup) || errors.Is(err, cgroupfs.ErrUnlimited) {
		// no pods cgroup or no limit: the agent has no observation either
	} else if err != nil {
		fail(err)
	} else {
		x.AllocatableMemoryAvailable = signalValue(o)
	}
	if l.Driver == cgroupfs.DriverNone {
		return x
	}
	if m, err := s.read(l.PodsCgroup); err != nil {
		fail(fmt.Errorf("pods cgroup %s: %w", l.PodsCgroup, err))
	} else {
		x.PodsCgroup = &m
	}
	return x
}

// readPods reads every pod cgroup into x.
func (s *cgroupSampler) readPods(x *CgroupSample, fail func(error)) {
	cgs, err := s.reader.Layout.PodCgroups()
	if err != nil {
		fail(fmt.Errorf("list pod cgroups: %w", err))
	}
	for _, cg := range cgs {
		if m, err := s.read(cg.Rel); err != nil {
			fail(fmt.Errorf("pod %s: %w", cg.UID, err))
		} else {
			x.Pods[cg.UID] = m
		}
	}
}

// read reads one memory cgroup (relative to the memory hierarchy) with the agent's reader.
func (s *cgroupSampler) read(rel string) (CgroupMemory, error) {
	m, err := s.reader.Layout.ReadMemory(rel)
	if err != nil {
		return CgroupMemory{}, err
	}
	ms := cgroupfs.ReclaimStat(m.Stat, s.reader.Layout.Version, 0)
	return CgroupMemory{Usage: m.Usage, WorkingSet: m.WorkingSet(), InactiveFile: m.InactiveFile, ActiveFile: ms.ActiveFile}, nil
}

func signalValue(o signal.Observation) *SignalValue {
	return &SignalValue{Available: o.Available, Capacity: o.Capacity}
}
