package statfs_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/statfs"
)

var now = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

// fakeStatfs is a hand-written double: fixed answers per path, errors for the rest.
type fakeStatfs map[string]statfs.Stat

func (f fakeStatfs) Statfs(p string) (statfs.Stat, error) {
	s, ok := f[p]
	if !ok {
		return statfs.Stat{}, &os.PathError{Op: "statfs", Path: p, Err: os.ErrNotExist}
	}
	return s, nil
}

func o(avail, capacity int64) signal.Observation {
	return signal.Observation{Available: avail, Capacity: capacity, Time: now, Source: signal.SourceStatfs}
}

func TestObserve(t *testing.T) {
	root := statfs.Stat{Bavail: 100, Blocks: 1000, Frsize: 4096, Ffree: 50, Files: 500, Dev: 1}
	img := statfs.Stat{Bavail: 7, Blocks: 70, Frsize: 512, Ffree: 3, Files: 30, Dev: 2}
	for _, tc := range []struct {
		name       string
		fs         fakeStatfs
		nodefs     string
		imagefs    string
		want       map[signal.Signal]signal.Observation
		dedicated  bool
		wantErrNil bool
	}{
		{name: "bytes use f_bavail and f_blocks times f_frsize, inodes use f_ffree and f_files",
			fs: fakeStatfs{"/var/lib/kubelet": root}, nodefs: "/var/lib/kubelet", wantErrNil: true,
			want: map[signal.Signal]signal.Observation{signal.NodeFsAvailable: o(409600, 4096000), signal.NodeFsInodesFree: o(50, 500)}},
		{name: "imagefs on another device is dedicated and containerfs mirrors it",
			fs: fakeStatfs{"/var/lib/kubelet": root, "/var/lib/containerd": img}, nodefs: "/var/lib/kubelet",
			imagefs: "/var/lib/containerd", dedicated: true, wantErrNil: true,
			want: map[signal.Signal]signal.Observation{
				signal.NodeFsAvailable: o(409600, 4096000), signal.NodeFsInodesFree: o(50, 500),
				signal.ImageFsAvailable: o(3584, 35840), signal.ImageFsInodesFree: o(3, 30),
				signal.ContainerFsAvailable: o(3584, 35840), signal.ContainerFsInodesFree: o(3, 30)}},
		{name: "imagefs on the same device is shared",
			fs: fakeStatfs{"/a": root, "/b": root}, nodefs: "/a", imagefs: "/b", wantErrNil: true,
			want: map[signal.Signal]signal.Observation{
				signal.NodeFsAvailable: o(409600, 4096000), signal.NodeFsInodesFree: o(50, 500),
				signal.ImageFsAvailable: o(409600, 4096000), signal.ImageFsInodesFree: o(50, 500),
				signal.ContainerFsAvailable: o(409600, 4096000), signal.ContainerFsInodesFree: o(50, 500)}},
		{name: "an unreadable nodefs has no observations, not zeros",
			fs: fakeStatfs{}, nodefs: "/missing", want: map[signal.Signal]signal.Observation{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &statfs.Reader{NodefsPath: tc.nodefs, ImagefsPath: tc.imagefs, Statfser: tc.fs}
			got, err := r.Observe(now)
			if (err == nil) != tc.wantErrNil {
				t.Errorf("Observe() error = %v, want nil: %t", err, tc.wantErrNil)
			}
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Observe() error = %v, want it to wrap the statfs error", err)
			}
			if d := cmp.Diff(got.Observations, tc.want); d != "" {
				t.Errorf("Observe() (-got +want):\n%s", d)
			}
			if got.Layout.DedicatedImageFs != tc.dedicated {
				t.Errorf("DedicatedImageFs = %t, want %t", got.Layout.DedicatedImageFs, tc.dedicated)
			}
		})
	}
}

func TestRealStatfs(t *testing.T) {
	r := &statfs.Reader{NodefsPath: "/", ImagefsPath: "/proc", Statfser: statfs.Unix{}}
	got, err := r.Observe(now)
	if err != nil {
		t.Fatal(err)
	}
	n := got.Observations[signal.NodeFsAvailable]
	if n.Capacity <= 0 || n.Available < 0 || n.Available > n.Capacity {
		t.Errorf("nodefs.available of / = %v, want 0 <= available <= capacity > 0", n)
	}
	if !got.Layout.DedicatedImageFs {
		t.Errorf("/ and /proc are different filesystems, want DedicatedImageFs")
	}
}
