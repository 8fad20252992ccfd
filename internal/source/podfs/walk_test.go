package podfs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/source/podfs"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// walkMemoryBound is the documented bound (docs/security.md, "Per-pod disk usage") on the heap a walk
// adds, whatever the tree: MaxDepth open directories with one batch each, and MaxLinked inode numbers.
const walkMemoryBound = 8 << 20

// tmpfs mounts a private tmpfs for n inodes on a new temporary directory: a million files are then
// made and removed in seconds, and leave nothing on this machine's disk.
func tmpfs(t *testing.T, inodes int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "mounting a tmpfs for a million files needs root")
	}
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=256m,nr_inodes=%d", inodes)); err != nil {
		t.Fatalf("mount tmpfs on %s: %v", dir, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// mknodFiles makes n empty regular files in dir (mknodat: one system call each).
func mknodFiles(t *testing.T, dir string, n int) {
	t.Helper()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	for i := range n {
		if err := unix.Mknodat(fd, fmt.Sprintf("f%07d", i), unix.S_IFREG|0o644, 0); err != nil {
			t.Fatalf("mknod %s/f%07d: %v", dir, i, err)
		}
	}
}

// peakHeap calls f while sampling the heap's live and not yet collected objects every millisecond,
// and returns f's result and the peak above the heap before f.
func peakHeap[T any](f func() T) (T, uint64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	var peak uint64
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if v := read(); v > peak {
				peak = v
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	v := f()
	close(done)
	wg.Wait()
	if peak < base {
		return v, 0
	}
	return v, peak - base
}

// TestWalkOfAMillionFilesStaysUnderItsMemoryBound is issue 30's finding 6: the walk kept a set of
// every inode and read whole directories, so an emptyDir with millions of files pushed the agent past
// its 128Mi limit. A million files (999,900 in one directory, 100 more in each of 1,000 directories
// would be the same) on a real tmpfs: the walk counts every one and its heap stays under
// walkMemoryBound.
func TestWalkOfAMillionFilesStaysUnderItsMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: makes a million files")
	}
	root := tmpfs(t, 1_100_000)
	const subdirs, perSubdir = 100, 1000
	flat := 1_000_000 - subdirs*perSubdir - subdirs
	mknodFiles(t, root, flat)
	for d := range subdirs {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		mknodFiles(t, dir, perSubdir)
	}
	type result struct {
		u   podfs.Usage
		err error
		d   time.Duration
	}
	r, heap := peakHeap(func() result {
		start := time.Now()
		u, err := podfs.DiskUsageWithin(root, podfs.Limits{MaxEntries: 2_000_000, MaxDuration: 10 * time.Minute})
		return result{u, err, time.Since(start)}
	})
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("walk of 1,000,000 entries: %s, heap peak %.1f MiB above the start (bound %d MiB)", r.d, float64(heap)/(1<<20), walkMemoryBound>>20)
	if r.u.Inodes != 1_000_001 || r.u.Partial {
		t.Errorf("usage %+v, want 1,000,001 inodes (the root and a million entries), not partial", r.u)
	}
	if heap > walkMemoryBound {
		t.Errorf("heap grew by %d bytes during the walk, want at most %d", heap, walkMemoryBound)
	}
}

// A walk stops at its entry limit and its time limit and says so: the counts are a lower bound.
func TestWalkStopsAtItsLimitsAndReportsALowerBound(t *testing.T) {
	root := t.TempDir()
	for d := range 3 {
		for f := range 1500 {
			write(t, filepath.Join(root, fmt.Sprint(d), fmt.Sprint(f)), 0)
		}
	}
	full, err := podfs.DiskUsage(root)
	if err != nil || full.Partial || full.Inodes != 1+3+3*1500 {
		t.Fatalf("full walk %+v err %v, want %d inodes, not partial", full, err, 1+3+3*1500)
	}
	u, err := podfs.DiskUsageWithin(root, podfs.Limits{MaxEntries: 100})
	if err != nil || !u.Partial || u.Inodes != 101 {
		t.Errorf("walk within 100 entries: %+v err %v, want 101 inodes (the root and 100), partial", u, err)
	}
	u, err = podfs.DiskUsageWithin(root, podfs.Limits{MaxDuration: time.Nanosecond})
	if err != nil || !u.Partial || u.Inodes >= full.Inodes {
		t.Errorf("walk within 1ns: %+v err %v, want a partial count below %d", u, err, full.Inodes)
	}
	deep := filepath.Join(root, "deep", strings.Repeat("d/", 10))
	write(t, filepath.Join(deep, "f"), 0)
	u, err = podfs.DiskUsageWithin(filepath.Join(root, "deep"), podfs.Limits{MaxDepth: 4})
	if err != nil || !u.Partial {
		t.Errorf("walk 4 directories deep of 11: %+v err %v, want partial", u, err)
	}
	linked := filepath.Join(root, "linked")
	for i := range 5 {
		write(t, filepath.Join(linked, fmt.Sprint(i)), 0)
		if err := os.Link(filepath.Join(linked, fmt.Sprint(i)), filepath.Join(linked, fmt.Sprint(i)+"-link")); err != nil {
			t.Fatal(err)
		}
	}
	if u, err := podfs.DiskUsageWithin(linked, podfs.Limits{MaxLinked: 5}); err != nil || u.Partial || u.Inodes != 6 {
		t.Errorf("5 hard-linked files within 5 remembered inodes: %+v err %v, want 6 inodes, not partial", u, err)
	}
	if u, err := podfs.DiskUsageWithin(linked, podfs.Limits{MaxLinked: 4}); err != nil || !u.Partial {
		t.Errorf("5 hard-linked files within 4 remembered inodes: %+v err %v, want partial", u, err)
	}
}

// The Reader shares one budget across a pod's volumes and logs, and names the pod it stopped.
func TestReaderReportsAPodWhoseWalkStoppedAtALimit(t *testing.T) {
	root, logs := kubeletTree(t)
	for i := range 50 {
		write(t, filepath.Join(root, "pods", "uid-a", "volumes", "kubernetes.io~empty-dir", "scratch", "many", fmt.Sprint(i)), 0)
	}
	var partial []string
	r := &podfs.Reader{KubeletRootDir: root, PodLogsDir: logs, MinInterval: -1, Limits: podfs.Limits{MaxEntries: 20},
		OnPartial: func(uid, why string) { partial = append(partial, uid+": "+why) }}
	pods, err := r.Pods(now)
	if err != nil {
		t.Fatal(err)
	}
	if len(partial) != 1 || partial[0] != "uid-a: more than 20 entries" {
		t.Errorf("partial walks %q, want uid-a stopped at 20 entries", partial)
	}
	if _, ok := pods["uid-a"]; !ok {
		t.Errorf("pods %v: uid-a missing; a partial walk still reports its lower bound", pods)
	}
}
