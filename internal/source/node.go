package source

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/source/statfs"
)

// Node reads every node signal. A nil Cgroup or Disk reader leaves its signals out.
type Node struct {
	Proc   *procfs.Reader
	Cgroup *cgroupfs.Reader
	Disk   *statfs.Reader
}

// Snapshot reads all sources and returns what could be observed, stamped with now. Errors from
// individual signals are joined; errors wrapping cgroupfs.ErrNoPodsCgroup or cgroupfs.ErrUnlimited are
// expected absences and are not returned.
func (n *Node) Snapshot(now time.Time) (signal.Snapshot, error) {
	s := signal.Snapshot{Observations: map[signal.Signal]signal.Observation{}, Pods: map[string]signal.PodStats{}}
	var errs []error
	errs = append(errs, n.proc(&s, now), n.memory(&s, now), n.disk(&s, now))
	sort.Slice(s.PSI, func(i, j int) bool {
		if s.PSI[i].Scope != s.PSI[j].Scope {
			return s.PSI[i].Scope < s.PSI[j].Scope
		}
		return s.PSI[i].Resource < s.PSI[j].Resource
	})
	return s, errors.Join(errs...)
}

func (n *Node) proc(s *signal.Snapshot, now time.Time) error {
	var errs []error
	if o, err := n.Proc.ObservePIDs(now); err != nil {
		errs = append(errs, fmt.Errorf("pid.available: %w", err))
	} else {
		s.Observations[signal.PIDAvailable] = o
	}
	psi, err := n.Proc.Pressure(now)
	s.PSI = append(s.PSI, psi...)
	errs = append(errs, err)
	return errors.Join(errs...)
}

func (n *Node) memory(s *signal.Snapshot, now time.Time) error {
	if n.Cgroup == nil {
		return nil
	}
	var errs []error
	if total, err := n.Proc.MemTotal(); err != nil {
		errs = append(errs, fmt.Errorf("memory.available: %w", err))
	} else if o, err := n.Cgroup.NodeMemory(now, total); err != nil {
		errs = append(errs, err)
	} else {
		s.Observations[signal.MemoryAvailable] = o
	}
	if o, err := n.Cgroup.AllocatableMemory(now); expectedAbsence(err) {
		// no pods cgroup or no limit: the kubelet has no observation either
	} else if err != nil {
		errs = append(errs, err)
	} else {
		s.Observations[signal.AllocatableMemoryAvailable] = o
	}
	pods, err := n.Cgroup.Pods(now)
	for uid, p := range pods {
		s.Pods[uid] = p
	}
	errs = append(errs, err)
	psi, err := n.Cgroup.Pressure(now)
	s.PSI = append(s.PSI, psi...)
	errs = append(errs, err, n.memoryStats(s))
	return errors.Join(errs...)
}

// memoryStats reads the reclaim fields of the node's and the pods cgroup's memory.stat; the node's
// workingset counters the root memory.stat lacks (cgroup v1: workingset_activate) come from /proc/vmstat.
func (n *Node) memoryStats(s *signal.Snapshot) error {
	var errs []error
	if ms, err := n.Cgroup.NodeMemoryStat(); err != nil {
		errs = append(errs, err)
	} else {
		if vm, err := n.Proc.Vmstat(); err != nil {
			errs = append(errs, fmt.Errorf("node workingset counters: %w", err))
		} else {
			ms = cgroupfs.WithVmstat(ms, vm)
		}
		s.NodeMemory = &ms
	}
	if ms, err := n.Cgroup.PodsMemoryStat(); expectedAbsence(err) {
		// no pods cgroup
	} else if err != nil {
		errs = append(errs, err)
	} else {
		s.PodsMemory = &ms
	}
	return errors.Join(errs...)
}

func (n *Node) disk(s *signal.Snapshot, now time.Time) error {
	if n.Disk == nil {
		return nil
	}
	res, err := n.Disk.Observe(now)
	for sig, o := range res.Observations {
		s.Observations[sig] = o
	}
	s.Filesystems = res.Layout
	return err
}

// expectedAbsence reports errors that mean "this signal does not exist here" rather than a failure.
func expectedAbsence(err error) bool {
	return errors.Is(err, cgroupfs.ErrNoPodsCgroup) || errors.Is(err, cgroupfs.ErrUnlimited)
}
