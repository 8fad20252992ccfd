package reclaim

import (
	"bufio"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/testenv"
)

const mib = 1 << 20

// cacheFile writes n bytes of random data to a file on the real disk under /var/tmp (tmpfs pages are
// shmem, not reclaimable file pages) and drops it from the page cache.
func cacheFile(tb testing.TB, n int64) string {
	tb.Helper()
	f, err := os.CreateTemp("/var/tmp", "pressure-reclaim-*.dat")
	if err != nil {
		testenv.SkipOrFail(tb, "no real disk under /var/tmp: %v", err)
	}
	tb.Cleanup(func() { os.Remove(f.Name()) })
	if _, err := io.CopyN(f, rand.Reader, n); err != nil {
		tb.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		tb.Fatal(err)
	}
	dropCache(tb, f.Name())
	return f.Name()
}

func dropCache(tb testing.TB, path string) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		tb.Fatal(err)
	}
}

// v1Cgroup creates a test cgroup under a test root on the host's v1 memory controller.
func v1Cgroup(tb testing.TB, limit int64) (root, dir string) {
	tb.Helper()
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(tb, "real cgroup v1 memory controller: %s", why)
	}
	root = filepath.Join(cgrouptest.V1Memory, cgrouptest.RandomName("pressure-reclaim"))
	dir = filepath.Join(root, "pod")
	if err := cgrouptest.Mkdir(dir, limit); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := cgrouptest.Remove(root); err != nil {
			tb.Errorf("remove %s: %v", root, err)
		}
	})
	return root, dir
}

// runIn runs a shell script inside the cgroup dir (it moves itself in first) and waits for it.
func runIn(tb testing.TB, dir, script string) {
	tb.Helper()
	out, err := exec.Command("sh", "-c", fmt.Sprintf("echo $$ > %s/cgroup.procs && %s", dir, script)).CombinedOutput()
	if err != nil {
		tb.Fatalf("%s: %v: %s", script, err, out)
	}
}

// holder starts a process in the cgroup that reads file into the page cache and then sleeps, and
// waits until the read is done.
func holder(tb testing.TB, dir, file string) *exec.Cmd {
	tb.Helper()
	cmd := exec.Command("sh", "-c", fmt.Sprintf("echo $$ > %s/cgroup.procs && cat %s > /dev/null && echo filled && exec sleep 600", dir, file))
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "filled\n" {
		tb.Fatalf("holder: %q, %v", line, err)
	}
	return cmd
}

func oomKills(tb testing.TB, dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "memory.oom_control"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			return v
		}
	}
	return "absent"
}

func TestReclaimV1DropsPageCacheWhileTheTaskRuns(t *testing.T) {
	const limit = 1 << 30
	root, dir := v1Cgroup(t, limit)
	file := cacheFile(t, 300*mib)
	cmd := holder(t, dir, file)
	r := &Reclaimer{Root: root}
	res := r.Reclaim(context.Background(), dir, 200*mib)
	t.Logf("reclaim: requested %d MiB, freed %d MiB (file %d MiB), took %s, partial %v, before %+v, after %+v",
		res.Requested/mib, res.Freed/mib, res.FileFreed/mib, res.Took, res.Partial, res.Before, res.After)
	if res.Err != nil {
		t.Fatalf("Reclaim: %v", res.Err)
	}
	if res.Before.File < 280*mib {
		t.Fatalf("before: file %d MiB, want the 300 MiB read charged to the cgroup", res.Before.File/mib)
	}
	if res.Freed < 180*mib || res.FileFreed < 180*mib {
		t.Errorf("freed %d MiB, file %d MiB: want most of the 200 MiB asked", res.Freed/mib, res.FileFreed/mib)
	}
	if res.Freed > 230*mib {
		t.Errorf("freed %d MiB: the reclaim is sized, want about the 200 MiB asked", res.Freed/mib)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the holder is gone after the reclaim: %v", err)
	}
	if got := oomKills(t, dir); got != "0" {
		t.Errorf("memory.oom_control oom_kill = %s, want 0", got)
	}
	if got, err := cgrouptest.ReadUint(filepath.Join(dir, "memory.limit_in_bytes")); err != nil || got != limit {
		t.Errorf("memory.limit_in_bytes = %d, %v after the reclaim; want the limit %d restored", got, err, limit)
	}
}

// A timeout in the middle of the steps stops them and still restores the limit.
func TestReclaimV1RestoresTheLimitWhenTheTimeoutStopsIt(t *testing.T) {
	const limit = 1 << 30
	root, dir := v1Cgroup(t, limit)
	file := cacheFile(t, 300*mib)
	cmd := holder(t, dir, file)
	r := &Reclaimer{Root: root, Chunk: 256 << 10, Timeout: time.Millisecond}
	res := r.Reclaim(context.Background(), dir, 200*mib)
	t.Logf("stopped after %s: freed %d MiB of 200, partial %v, err %v", res.Took, res.Freed/mib, res.Partial, res.Err)
	if !errors.Is(res.Err, context.DeadlineExceeded) || !res.Partial {
		t.Fatalf("Reclaim = %+v, want a partial result stopped by the deadline", res)
	}
	if res.Freed >= 200*mib {
		t.Errorf("freed %d MiB: the timeout did not stop the steps", res.Freed/mib)
	}
	if got, err := cgrouptest.ReadUint(filepath.Join(dir, "memory.limit_in_bytes")); err != nil || got != limit {
		t.Errorf("memory.limit_in_bytes = %d, %v after the timeout; want the limit %d restored", got, err, limit)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the holder is gone: %v", err)
	}
}

func TestReclaimV1NeverLowersTheLimitIntoAnonymousMemory(t *testing.T) {
	root, dir := v1Cgroup(t, 1<<30)
	hog, err := cgrouptest.StartHog(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hog.Close() })
	if err := hog.Alloc(100 * mib); err != nil {
		t.Fatal(err)
	}
	res := (&Reclaimer{Root: root}).Reclaim(context.Background(), dir, 200*mib)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "under the floor") {
		t.Fatalf("Reclaim = %+v, want a refusal: usage - 200 MiB is under rss + margin", res)
	}
	if err := syscall.Kill(hog.Pid, 0); err != nil {
		t.Errorf("the hog is gone: %v", err)
	}
	if got := oomKills(t, dir); got != "0" {
		t.Errorf("oom_kill = %s, want 0", got)
	}
}

func TestMain(m *testing.M) {
	cgrouptest.RunHogIfRequested()
	os.Exit(m.Run())
}

// BenchmarkReclaimV1 measures one 200 MiB reclaim of a cgroup holding 300 MiB of page cache: its time,
// the CPU of the process that asked (the kernel reclaims in the writer's context), and what the pod
// pays afterwards when it reads the file again (refaulted pages and the read's time). force_empty is
// the alternative this package rejected (unsized: it drops the whole cache), measured beside it.
func BenchmarkReclaimV1(b *testing.B) {
	b.Run("limit", func(b *testing.B) {
		benchV1(b, func(root, dir string) (int64, error) {
			res := (&Reclaimer{Root: root}).Reclaim(context.Background(), dir, 200*mib)
			return res.Freed, res.Err
		})
	})
	b.Run("force_empty", func(b *testing.B) {
		benchV1(b, func(_, dir string) (int64, error) {
			u0, _ := ReadUsage(dir, V1)
			err := cgrouptest.WriteFile(filepath.Join(dir, "memory.force_empty"), "0")
			u1, _ := ReadUsage(dir, V1)
			return u0.Usage - u1.Usage, err
		})
	})
}

func benchV1(b *testing.B, reclaim func(root, dir string) (int64, error)) {
	root, dir := v1Cgroup(b, 1<<30)
	file := cacheFile(b, 300*mib)
	holder(b, dir, file)
	var took, cpu, reread time.Duration
	var freed, refaults int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		runIn(b, dir, "cat "+file+" > /dev/null")
		var ru0, ru1 unix.Rusage
		_ = unix.Getrusage(unix.RUSAGE_SELF, &ru0)
		t0 := time.Now()
		b.StartTimer()
		n, err := reclaim(root, dir)
		b.StopTimer()
		took += time.Since(t0)
		_ = unix.Getrusage(unix.RUSAGE_SELF, &ru1)
		if err != nil {
			b.Fatal(err)
		}
		cpu += time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
		freed += n
		u0, _ := ReadUsage(dir, V1)
		t1 := time.Now()
		runIn(b, dir, "cat "+file+" > /dev/null")
		reread += time.Since(t1)
		u1, _ := ReadUsage(dir, V1)
		refaults += u1.Refaults - u0.Refaults
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(took.Microseconds())/1000/n, "reclaim-ms/op")
	b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/op")
	b.ReportMetric(float64(freed)/mib/n, "freed-MiB/op")
	b.ReportMetric(float64(refaults)/n, "refaults/op")
	b.ReportMetric(float64(reread.Milliseconds())/n, "reread-ms/op")
}
