package cgroupfs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// benchPods is the pod count of the node docs/benchmarks.md measured the agent's CPU on.
const benchPods = 52

// benchUID is the UID of pod i of the benchmark trees.
func benchUID(i int) string { return fmt.Sprintf("00000000-0000-0000-0000-%012d", i) }

// BenchmarkReaderPods is docs/benchmarks.md's Reader.Pods microbenchmark: one call reads 52 pod cgroups
// with two container cgroups each (cgroup v1, burstable), on a fixture tree copied from
// testdata/cgroupv1-cgroupfs and, when this host has the real cgroup v1 memory controller and root, on
// real cgroups (no processes) it creates and removes.
func BenchmarkReaderPods(b *testing.B) {
	b.Run("fixture-v1", func(b *testing.B) {
		root := b.TempDir()
		src := filepath.Join("testdata", "cgroupv1-cgroupfs", "memory", "kubepods", "pod11111111-2222-3333-4444-555555555555")
		for i := range benchPods {
			pod := filepath.Join(root, "kubepods", "burstable", "pod"+benchUID(i))
			if err := os.CopyFS(pod, os.DirFS(src)); err != nil {
				b.Fatal(err)
			}
			if err := os.CopyFS(filepath.Join(pod, "ctr2"), os.DirFS(filepath.Join(src, "ctr"))); err != nil {
				b.Fatal(err)
			}
		}
		benchPodsRead(b, cgroupfs.Layout{Version: cgroupfs.V1, Memory: root, Driver: cgroupfs.DriverCgroupfs, PodsCgroup: "kubepods"})
	})
	b.Run("real-v1", func(b *testing.B) {
		if why := cgrouptest.Available(); why != "" {
			testenv.SkipOrFail(b, "real cgroup v1 benchmark cannot run: %s", why)
		}
		top := cgrouptest.RandomName("pressure-bench")
		b.Cleanup(func() {
			if err := cgrouptest.Remove(filepath.Join(cgrouptest.V1Memory, top)); err != nil {
				b.Errorf("remove %s: %v", top, err)
			}
		})
		for i := range benchPods {
			pod := filepath.Join(cgrouptest.V1Memory, top, "kubepods", "burstable", "pod"+benchUID(i))
			for _, c := range []string{"ctr1", "ctr2"} {
				if err := cgrouptest.Mkdir(filepath.Join(pod, c), 0); err != nil {
					b.Fatal(err)
				}
			}
		}
		benchPodsRead(b, cgroupfs.Layout{Version: cgroupfs.V1, Memory: cgrouptest.V1Memory, Driver: cgroupfs.DriverCgroupfs,
			PodsCgroup: filepath.Join(top, "kubepods")})
	})
}

// benchPodsRead checks that Reader.Pods on l returns benchPods pods without error, then times it.
func benchPodsRead(b *testing.B, l cgroupfs.Layout) {
	b.Helper()
	r := &cgroupfs.Reader{Layout: l}
	now := time.Unix(0, 0)
	pods, err := r.Pods(now)
	if err != nil || len(pods) != benchPods {
		b.Fatalf("Pods() = %d pods, %v; want %d pods", len(pods), err, benchPods)
	}
	b.ReportAllocs()
	cpu0 := processCPU(b)
	n := 0
	for b.Loop() {
		if _, err := r.Pods(now); err != nil {
			b.Fatal(err)
		}
		n++
	}
	// CPU time (user + system) per call, the number docs/benchmarks.md compares: on a loaded host the
	// wall time per call (ns/op) also counts the time the benchmark waited for a core.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(n), "cpu-ns/op")
}

// processCPU is this process's user + system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
