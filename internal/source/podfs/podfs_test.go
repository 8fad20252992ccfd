package podfs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/source/podfs"
)

var now = time.Date(2026, 12, 2, 7, 0, 0, 0, time.UTC)

func write(t *testing.T, path string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(strings.Repeat("x", size)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A real directory tree on this machine's filesystem: the bytes are allocated blocks, the inodes the
// distinct inodes, hard links once.
func TestDiskUsageCountsBlocksAndDistinctInodes(t *testing.T) {
	root := t.TempDir()
	write(t, filepath.Join(root, "a"), 1<<20)
	write(t, filepath.Join(root, "sub", "b"), 10)
	if err := os.Link(filepath.Join(root, "a"), filepath.Join(root, "sub", "a-link")); err != nil {
		t.Fatal(err)
	}
	u, err := podfs.DiskUsage(root)
	if err != nil {
		t.Fatal(err)
	}
	if u.Inodes != 4 { // root, a (twice linked), sub, b
		t.Errorf("inodes %d, want 4", u.Inodes)
	}
	if u.Bytes < 1<<20 || u.Bytes > 1<<20+64<<10 {
		t.Errorf("bytes %d, want about 1 MiB (the hard link counted once)", u.Bytes)
	}
}

func TestDiskUsageOfAMissingDirectoryIsAnError(t *testing.T) {
	if _, err := podfs.DiskUsage(filepath.Join(t.TempDir(), "gone")); err == nil {
		t.Fatal("no error for a missing directory")
	}
}

func kubeletTree(t *testing.T) (root, logs string) {
	root, logs = t.TempDir(), t.TempDir()
	write(t, filepath.Join(root, "pods", "uid-a", "volumes", "kubernetes.io~empty-dir", "scratch", "big"), 2<<20)
	write(t, filepath.Join(root, "pods", "uid-a", "volumes", "kubernetes.io~configmap", "cfg", "key"), 100)
	write(t, filepath.Join(root, "pods", "uid-a", "volumes", "kubernetes.io~csi", "pv", "data"), 8<<20) // not local
	write(t, filepath.Join(logs, "default_a_uid-a", "app", "0.log"), 64<<10)
	if err := os.MkdirAll(filepath.Join(root, "pods", "uid-b"), 0o755); err != nil { // no volumes, no logs
		t.Fatal(err)
	}
	return root, logs
}

func TestPodsMeasuresLocalVolumesAndLogsOnly(t *testing.T) {
	root, logs := kubeletTree(t)
	r := &podfs.Reader{KubeletRootDir: root, PodLogsDir: logs}
	pods, err := r.Pods(now)
	if err != nil {
		t.Fatal(err)
	}
	a := pods["uid-a"]
	if len(a.Volumes) != 2 || a.Volumes[0].Name != "cfg" || a.Volumes[1].Name != "scratch" {
		t.Fatalf("volumes %+v, want cfg and scratch (the CSI volume is not local storage)", a.Volumes)
	}
	if got := *a.Volumes[1].UsedBytes; got < 2<<20 || got > 3<<20 {
		t.Errorf("scratch uses %d bytes, want about 2 MiB", got)
	}
	if len(a.Containers) != 1 || a.Containers[0].Name != "app" || *a.Containers[0].LogsUsed < 64<<10 {
		t.Errorf("containers %+v, want app with its 64 KiB of logs", a.Containers)
	}
	if a.Containers[0].RootfsUsed != nil {
		t.Error("rootfs measured: writable layers are not read, they must stay absent")
	}
	b, ok := pods["uid-b"]
	if !ok || len(b.Volumes) != 0 || len(b.Containers) != 0 || !b.Time.Equal(now) {
		t.Errorf("uid-b %+v: want an entry with nothing measured in it", b)
	}
}

// A DaemonSet that mounts only the kubelet's pods directory names it as PodsDir; KubeletRootDir is then
// not read for pods.
func TestPodsReadsPodsDirInsteadOfTheKubeletRootDir(t *testing.T) {
	root, logs := kubeletTree(t)
	r := &podfs.Reader{KubeletRootDir: filepath.Join(t.TempDir(), "empty"), PodsDir: filepath.Join(root, "pods"), PodLogsDir: logs}
	pods, err := r.Pods(now)
	if err != nil {
		t.Fatal(err)
	}
	if a := pods["uid-a"]; len(a.Volumes) != 2 || len(a.Containers) != 1 {
		t.Errorf("uid-a %+v, want its 2 local volumes and 1 container's logs", a)
	}
}

func TestPodsReusesAMeasurementForMinInterval(t *testing.T) {
	root, logs := kubeletTree(t)
	r := &podfs.Reader{KubeletRootDir: root, PodLogsDir: logs, MinInterval: 5 * time.Second}
	first, err := r.Pods(now)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(root, "pods", "uid-a", "volumes", "kubernetes.io~empty-dir", "scratch", "more"), 4<<20)
	again, _ := r.Pods(now.Add(4 * time.Second))
	if *again["uid-a"].Volumes[1].UsedBytes != *first["uid-a"].Volumes[1].UsedBytes || !again["uid-a"].Time.Equal(now) {
		t.Error("measured again within MinInterval")
	}
	later, _ := r.Pods(now.Add(5 * time.Second))
	if *later["uid-a"].Volumes[1].UsedBytes < 6<<20 {
		t.Errorf("after MinInterval scratch uses %d bytes, want the new 4 MiB counted", *later["uid-a"].Volumes[1].UsedBytes)
	}
}

func TestPodsWithoutAKubeletRootDirIsAnErrorAndNoPods(t *testing.T) {
	r := &podfs.Reader{KubeletRootDir: filepath.Join(t.TempDir(), "none")}
	pods, err := r.Pods(now)
	if err == nil || len(pods) != 0 {
		t.Fatalf("pods %v err %v: want no pods and an error", pods, err)
	}
}

// BenchmarkDiskUsage walks an emptyDir of 10,000 small files (the cost of one pod's measurement, per
// file: docs/benchmarks.md).
func BenchmarkDiskUsage(b *testing.B) {
	root := b.TempDir()
	for d := 0; d < 100; d++ {
		dir := filepath.Join(root, fmt.Sprint(d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for f := 0; f < 100; f++ {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprint(f)), []byte("x"), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		u, err := podfs.DiskUsage(root)
		if err != nil || u.Inodes != 10101 {
			b.Fatalf("usage %+v err %v, want 10101 inodes", u, err)
		}
	}
}
