package source

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/podfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/source/statfs"
)

// Node reads every node signal. A nil Cgroup, Disk or PodFS reader leaves its signals out.
type Node struct {
	Proc   *procfs.Reader
	Cgroup *cgroupfs.Reader
	Disk   *statfs.Reader
	// PodFS measures each pod's local volumes and logs (per-pod disk usage); nil leaves it unmeasured.
	PodFS *podfs.Reader
}

// Snapshot reads all sources and returns what could be observed, stamped with now: the pods first
// (ReadPodsFirst). Errors from individual signals are joined; errors wrapping cgroupfs.ErrNoPodsCgroup or
// cgroupfs.ErrUnlimited are expected absences and are not returned.
func (n *Node) Snapshot(now time.Time) (signal.Snapshot, error) {
	return ReadPodsFirst(n, now)
}

// NodeReader reads a node in two parts (Node): its own signals, and every pod's stats.
type NodeReader interface {
	ReadNode(now time.Time) (signal.Snapshot, error)
	ReadPods(s *signal.Snapshot, now time.Time) error
}

// ReadPodsFirst reads every pod's stats, then the node's signals. The policy credits an in-flight pod's
// memory and disk (the lower of what it had and what it has) against the signals; read the other way
// round, a pod that frees memory between the reads is credited nothing while the signals still count it
// as used, and the next pod is evicted for memory that is already back (a soak run showed it: a pod in
// teardown read 0.1Mi while the pods cgroup, read just before, still held its 500Mi). In this order the
// worst case is the opposite one, for one read: the freed memory counted twice, an eviction one sync
// late rather than one too many.
func ReadPodsFirst(r NodeReader, now time.Time) (signal.Snapshot, error) {
	pods := signal.Snapshot{Pods: map[string]signal.PodStats{}}
	perr := r.ReadPods(&pods, now)
	s, err := r.ReadNode(now)
	s.Pods = pods.Pods
	return s, errors.Join(err, perr)
}

// ReadNode reads the node-level signals, the node's and the pods cgroup's memory.stat and PSI: everything
// but the per-pod stats, whose read is most of a snapshot's cost (one cgroup tree and, with PodFS, one
// directory walk per pod). s.Pods is empty; ReadPods fills it.
func (n *Node) ReadNode(now time.Time) (signal.Snapshot, error) {
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

// ReadPods adds every pod's stats to s: memory and tasks from its cgroups, then its volumes and logs.
func (n *Node) ReadPods(s *signal.Snapshot, now time.Time) error {
	var errs []error
	if n.Cgroup != nil {
		pods, err := n.Cgroup.Pods(now)
		for uid, p := range pods {
			s.Pods[uid] = p
		}
		errs = append(errs, err)
	}
	return errors.Join(append(errs, n.podDisk(s, now))...)
}

// expectedAbsence reports errors that mean "this signal does not exist here" rather than a failure.
func expectedAbsence(err error) bool {
	return errors.Is(err, cgroupfs.ErrNoPodsCgroup) || errors.Is(err, cgroupfs.ErrUnlimited)
}

// podDisk merges the pods' measured disk usage into their stats: volumes and container logs. A pod
// found only on disk (no cgroup: not started yet, or its volumes outlive it) gets an entry with the
// disk parts alone.
func (n *Node) podDisk(s *signal.Snapshot, now time.Time) error {
	if n.PodFS == nil {
		return nil
	}
	disk, err := n.PodFS.Pods(now)
	for uid, d := range disk {
		s.Pods[uid] = MergeDisk(s.Pods[uid], d)
	}
	if err != nil {
		return fmt.Errorf("per-pod disk usage: %w", err)
	}
	return nil
}

// MergeDisk returns p with the disk parts of d: its volumes, and each container's logs (a container of
// d not in p is added). p's other fields are kept; a p without UID takes d's UID and time.
func MergeDisk(p, d signal.PodStats) signal.PodStats {
	if p.UID == "" {
		p.UID, p.Time = d.UID, d.Time
	}
	p.Volumes = append([]signal.VolumeStats(nil), d.Volumes...)
	p.Containers = append([]signal.ContainerStats(nil), p.Containers...)
	for _, dc := range d.Containers {
		i := -1
		for j := range p.Containers {
			if p.Containers[j].Name == dc.Name {
				i = j
			}
		}
		if i < 0 {
			p.Containers = append(p.Containers, signal.ContainerStats{Name: dc.Name})
			i = len(p.Containers) - 1
		}
		p.Containers[i].LogsUsed, p.Containers[i].LogsInodes = dc.LogsUsed, dc.LogsInodes
	}
	return p
}
