package cgroupfs_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// BenchmarkPollSample is the cost of one sample of the agent's adaptive poll (internal/agent wakers.poller):
// memory.available from the root memory cgroup and allocatableMemory.available from a pods cgroup with
// a limit, on this host's real cgroup v1 memory controller, through a Sampler as the poll reads. docs/benchmarks.md multiplies its cpu-ns/op
// by the samples per second at the poll's floor to give the poll's cost near a threshold.
func BenchmarkPollSample(b *testing.B) {
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(b, "real cgroup v1 benchmark cannot run: %s", why)
	}
	top := cgrouptest.RandomName("pressure-bench-poll")
	b.Cleanup(func() {
		if err := cgrouptest.Remove(filepath.Join(cgrouptest.V1Memory, top)); err != nil {
			b.Errorf("remove %s: %v", top, err)
		}
	})
	if err := cgrouptest.Mkdir(filepath.Join(cgrouptest.V1Memory, top, "kubepods"), 2<<30); err != nil {
		b.Fatal(err)
	}
	r := &cgroupfs.Reader{Layout: cgroupfs.Layout{Version: cgroupfs.V1, Memory: cgrouptest.V1Memory,
		Driver: cgroupfs.DriverCgroupfs, PodsCgroup: filepath.Join(top, "kubepods")}}
	total, err := procfs.NewReader("/proc").MemTotal()
	if err != nil {
		b.Fatal(err)
	}
	smp := r.NewSampler() // what the poll reads through since issue 27 (before: r itself)
	b.Cleanup(func() { _ = smp.Close() })
	sample := func() error {
		now := time.Now()
		if _, err := smp.AllocatableMemory(now); err != nil {
			return err
		}
		_, err := smp.NodeMemory(now, total)
		return err
	}
	if err := sample(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	cpu0 := processCPU(b)
	n := 0
	for b.Loop() {
		if err := sample(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(n), "cpu-ns/op")
}
