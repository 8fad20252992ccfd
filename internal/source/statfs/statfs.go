package statfs

import (
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/signal"
)

// Stat is what statfs(2) and stat(2) say about the filesystem holding a path.
type Stat struct {
	Bavail, Blocks, Frsize uint64
	Ffree, Files           uint64
	// Dev is the device (st_dev) of the path itself; two paths on one filesystem share it.
	Dev uint64
}

// Statfser returns the Stat of the filesystem holding path.
type Statfser interface {
	Statfs(path string) (Stat, error)
}

// Unix is the real Statfser: statfs(2) for the numbers, stat(2) for the device.
type Unix struct{}

// Statfs implements Statfser.
func (Unix) Statfs(path string) (Stat, error) {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err != nil {
		return Stat{}, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return Stat{}, &os.PathError{Op: "stat", Path: path, Err: err}
	}
	frsize := uint64(fs.Frsize)
	if frsize == 0 {
		frsize = uint64(fs.Bsize)
	}
	return Stat{Bavail: fs.Bavail, Blocks: fs.Blocks, Frsize: frsize, Ffree: fs.Ffree, Files: fs.Files,
		Dev: uint64(st.Dev)}, nil
}

// Reader observes nodefs and imagefs.
type Reader struct {
	// NodefsPath is the kubelet root directory, usually /var/lib/kubelet.
	NodefsPath string
	// ImagefsPath is the runtime root, e.g. /var/lib/containerd; "" means imagefs is not observed.
	ImagefsPath string
	Statfser    Statfser
}

// Result is the disk part of a snapshot.
type Result struct {
	Observations map[signal.Signal]signal.Observation
	Layout       signal.FilesystemLayout
}

// Observe stats both paths and returns the observations measured at now. A failing path contributes no
// observations and its error is joined into the returned error.
func (r *Reader) Observe(now time.Time) (Result, error) {
	res := Result{Observations: map[signal.Signal]signal.Observation{}}
	var errs []error
	node, nodeErr := r.Statfser.Statfs(r.NodefsPath)
	if err := nodeErr; err != nil {
		errs = append(errs, fmt.Errorf("nodefs: %w", err))
	} else {
		add(res.Observations, now, node, signal.NodeFsAvailable, signal.NodeFsInodesFree)
	}
	if r.ImagefsPath != "" {
		img, err := r.Statfser.Statfs(r.ImagefsPath)
		if err != nil {
			errs = append(errs, fmt.Errorf("imagefs: %w", err))
		} else {
			add(res.Observations, now, img, signal.ImageFsAvailable, signal.ImageFsInodesFree)
			add(res.Observations, now, img, signal.ContainerFsAvailable, signal.ContainerFsInodesFree)
			// Unknown when nodefs failed: report shared, the kubelet's default layout.
			res.Layout.DedicatedImageFs = nodeErr == nil && node.Dev != img.Dev
		}
	}
	return res, errors.Join(errs...)
}

// add stores the bytes and inodes observations of one filesystem.
func add(obs map[signal.Signal]signal.Observation, now time.Time, s Stat, bytes, inodes signal.Signal) {
	obs[bytes] = signal.Observation{Available: clamp(s.Bavail, s.Frsize), Capacity: clamp(s.Blocks, s.Frsize),
		Time: now, Source: signal.SourceStatfs}
	obs[inodes] = signal.Observation{Available: clamp(s.Ffree, 1), Capacity: clamp(s.Files, 1),
		Time: now, Source: signal.SourceStatfs}
}

// clamp multiplies and caps the product at MaxInt64 instead of wrapping.
func clamp(n, size uint64) int64 {
	const maxInt = uint64(1<<63 - 1)
	if size != 0 && n > maxInt/size {
		return int64(maxInt)
	}
	return int64(n * size)
}
