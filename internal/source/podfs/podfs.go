package podfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
)

// LocalVolumePlugins are the volume plugin directories whose volumes the kubelet counts as local
// storage (kubelet localVolumeNames: emptyDir, configMap, gitRepo; hostPath has no directory there).
var LocalVolumePlugins = []string{"kubernetes.io~configmap", "kubernetes.io~empty-dir", "kubernetes.io~git-repo"}

// DefaultMinInterval is how long a measurement is reused: disks fill in minutes, syncs come in bursts.
const DefaultMinInterval = 5 * time.Second

// Reader measures the pods' local disk usage.
type Reader struct {
	// KubeletRootDir is the kubelet's --root-dir (/var/lib/kubelet).
	KubeletRootDir string
	// PodsDir is the kubelet's pods directory; "" means <KubeletRootDir>/pods (a DaemonSet may mount
	// only that directory, elsewhere).
	PodsDir string
	// PodLogsDir is the kubelet's podLogsDir (/var/log/pods); "" leaves the logs unmeasured.
	PodLogsDir string
	// MinInterval is how long a measurement is reused (0: DefaultMinInterval; negative: never).
	MinInterval time.Duration
	// Limits bound each pod's walk (zero fields: the defaults). A pod whose walk reaches one is
	// reported with the usage counted so far, a lower bound, and OnPartial is called.
	Limits Limits
	// OnPartial, when set, is called for each pod whose walk stopped at a limit: its UID and why.
	OnPartial func(uid, why string)
	// Clock is the walks' deadline clock (nil: time.Now).
	Clock func() time.Time

	last     time.Time
	cached   map[string]signal.PodStats
	cacheErr error
}

// Usage is the disk usage of one directory tree.
type Usage struct {
	Bytes, Inodes uint64
	// Partial is true when the walk stopped at a limit: Bytes and Inodes are then a lower bound.
	Partial bool
}

// Pods returns the measured disk parts of every pod found in the pods directory, keyed by UID:
// Volumes (one entry per local volume, by name) and Containers (Name, LogsUsed, LogsInodes). Only the
// disk fields are set. A pod whose directories cannot be read is left out, its error joined. The
// result may be up to MinInterval old; PodStats.Time says when it was measured.
func (r *Reader) Pods(now time.Time) (map[string]signal.PodStats, error) {
	min := r.MinInterval
	if min == 0 {
		min = DefaultMinInterval
	}
	if r.cached != nil && min > 0 && now.Sub(r.last) < min && !now.Before(r.last) {
		return r.cached, r.cacheErr
	}
	out, err := r.measure(now)
	r.cached, r.cacheErr, r.last = out, err, now
	return out, err
}

func (r *Reader) measure(now time.Time) (map[string]signal.PodStats, error) {
	podsDir := r.PodsDir
	if podsDir == "" {
		podsDir = filepath.Join(r.KubeletRootDir, "pods")
	}
	entries, err := os.ReadDir(podsDir)
	if err != nil {
		return nil, fmt.Errorf("pod volumes: %w", err)
	}
	logs := r.logDirs()
	out := make(map[string]signal.PodStats, len(entries))
	var errs []error
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		uid := e.Name()
		b := newBudget(r.Limits, r.clock())
		ps, err := r.pod(filepath.Join(podsDir, uid), logs[uid], b)
		if b.stopped != "" && r.OnPartial != nil {
			r.OnPartial(uid, b.stopped)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("pod %s: %w", uid, err))
			continue
		}
		ps.UID, ps.Time = uid, now
		out[uid] = ps
	}
	return out, errors.Join(errs...)
}

// logDirs maps pod UIDs to their log directory (<namespace>_<name>_<uid>).
func (r *Reader) logDirs() map[string]string {
	out := map[string]string{}
	if r.PodLogsDir == "" {
		return out
	}
	entries, err := os.ReadDir(r.PodLogsDir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		n := e.Name()
		if i := strings.LastIndex(n, "_"); e.IsDir() && i >= 0 {
			out[n[i+1:]] = filepath.Join(r.PodLogsDir, n)
		}
	}
	return out
}

func (r *Reader) clock() func() time.Time {
	if r.Clock != nil {
		return r.Clock
	}
	return time.Now
}

func (r *Reader) pod(dir, logDir string, b *budget) (signal.PodStats, error) {
	var ps signal.PodStats
	for _, plugin := range LocalVolumePlugins {
		vols, err := os.ReadDir(filepath.Join(dir, "volumes", plugin))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return ps, err
		}
		for _, v := range vols {
			u, err := walk(filepath.Join(dir, "volumes", plugin, v.Name()), b)
			if err != nil {
				return ps, err
			}
			ps.Volumes = append(ps.Volumes, signal.VolumeStats{Name: v.Name(), UsedBytes: signal.Uint64(u.Bytes),
				InodesUsed: signal.Uint64(u.Inodes)})
		}
	}
	sort.Slice(ps.Volumes, func(i, j int) bool { return ps.Volumes[i].Name < ps.Volumes[j].Name })
	if logDir == "" {
		return ps, nil
	}
	ctrs, err := os.ReadDir(logDir)
	if err != nil {
		return ps, err
	}
	for _, c := range ctrs {
		if !c.IsDir() {
			continue
		}
		u, err := walk(filepath.Join(logDir, c.Name()), b)
		if err != nil {
			return ps, err
		}
		ps.Containers = append(ps.Containers, signal.ContainerStats{Name: c.Name(), LogsUsed: signal.Uint64(u.Bytes),
			LogsInodes: signal.Uint64(u.Inodes)})
	}
	return ps, nil
}

// DiskUsage walks root like the kubelet's fs.DiskUsage: the allocated bytes (st_blocks × 512) and the
// distinct inodes of root and everything below it on root's filesystem. A directory on another device
// (a mount point) is counted as one inode and not descended into. Entries that vanish during the walk
// are skipped (a pod writing and deleting files). The walk is bounded by the default Limits; where it
// stops at one, Usage.Partial says the counts are a lower bound.
func DiskUsage(root string) (Usage, error) {
	return walk(root, newBudget(Limits{}, time.Now))
}

// DiskUsageWithin is DiskUsage within the given limits.
func DiskUsageWithin(root string, l Limits) (Usage, error) {
	return walk(root, newBudget(l, time.Now))
}
