package reclaim

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

// The real cgroup v2 tests run in the guest of test/vm (its guest suite for this package); on the host
// cgrouptest.V2Root skips them.

// oomKillsV2 is the oom_kill count of the cgroup's memory.events.
func oomKillsV2(tb testing.TB, dir string) int64 {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "memory.events"))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				tb.Fatalf("memory.events line %q: %v", line, err)
			}
			return n
		}
	}
	tb.Fatalf("memory.events %q: no oom_kill line", b)
	return 0
}

// cacheHolder starts a process in the cgroup dir that writes a file of mib MiB on the guest's disk (its
// pages are charged to the cgroup), syncs it (clean pages), reads it back and then sleeps; it waits for
// the fill.
func cacheHolder(tb testing.TB, dir string, mib int) *exec.Cmd {
	tb.Helper()
	file := filepath.Join(cgrouptest.GuestDisk(tb), cgrouptest.RandomName("pressure-reclaim")+".dat")
	tb.Cleanup(func() { os.Remove(file) })
	script := fmt.Sprintf("echo $$ > %s/cgroup.procs && dd if=/dev/zero of=%s bs=1M count=%d 2>/dev/null && busybox sync && cat %s > /dev/null && echo filled && exec sleep 600",
		dir, file, mib, file)
	cmd := exec.Command("sh", "-c", script)
	cmd.Stderr = os.Stderr
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
		tb.Fatalf("cache holder: %q, %v", line, err)
	}
	return cmd
}

// A process holding 200 MiB of page cache on a real disk in the guest: a 150 MiB reclaim drops most of
// 150 MiB of it, and not much more (the guest's 6.1 kernel overshoots each memory.reclaim write: with
// 64 MiB writes the same call freed 210 MiB), in a few seconds, while the process runs on and nothing is
// OOM-killed.
func TestReclaimRealV2DropsPageCacheWhileTheProcessRuns(t *testing.T) {
	root := cgrouptest.V2Root(t)
	dir := cgrouptest.NewV2Cgroup(t, root, "pressure-reclaim")
	start := time.Now()
	cmd := cacheHolder(t, dir, 200)
	filled := time.Since(start)
	kills := oomKillsV2(t, dir)
	r := &Reclaimer{Root: root, Timeout: 20 * time.Second}
	res := r.Reclaim(context.Background(), dir, 150*mib)
	t.Logf("filled 200 MiB in %s; reclaim: requested %d MiB, freed %d MiB (file %d MiB), took %s, partial %v, err %v; before %+v, after %+v",
		filled.Round(time.Millisecond), res.Requested/mib, res.Freed/mib, res.FileFreed/mib, res.Took, res.Partial, res.Err, res.Before, res.After)
	if res.Err != nil {
		t.Fatalf("Reclaim: %v", res.Err)
	}
	if res.Before.File < 190*mib {
		t.Fatalf("before: file %d MiB, want the 200 MiB written charged to the cgroup", res.Before.File/mib)
	}
	if res.FileFreed < 120*mib {
		t.Errorf("memory.stat file fell by %d MiB, want most of the 150 MiB asked", res.FileFreed/mib)
	}
	if res.Freed > 180*mib {
		t.Errorf("freed %d MiB: the reclaim is sized, want about the 150 MiB asked", res.Freed/mib)
	}
	if res.Took > 15*time.Second {
		t.Errorf("took %s, want well under the 20 s timeout", res.Took)
	}
	if err := cmd.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the holder is gone after the reclaim: %v", err)
	}
	if got := oomKillsV2(t, dir); got != kills {
		t.Errorf("memory.events oom_kill %d after the reclaim, %d before", got, kills)
	}
}

// A cgroup holding only anonymous memory (no swap in the guest: nothing reclaimable) is a partial result,
// and a bounded one: the kernel's memory.reclaim loop gives up with EAGAIN (or the timeout interrupts the
// write). Nothing is killed. Through an os.File this write never returned (Go's poller waited for the
// cgroup file to poll writable after the EAGAIN; see writeInterruptible).
func TestReclaimRealV2AnonymousMemoryIsABoundedPartialResult(t *testing.T) {
	root := cgrouptest.V2Root(t)
	dir := cgrouptest.NewV2Cgroup(t, root, "pressure-reclaim")
	hog, err := cgrouptest.StartHog(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hog.Close() })
	if err := hog.Alloc(32 * mib); err != nil {
		t.Fatal(err)
	}
	const timeout = 3 * time.Second
	res := (&Reclaimer{Root: root, Timeout: timeout}).Reclaim(context.Background(), dir, 16*mib)
	t.Logf("v2 reclaim of anonymous memory: requested %d MiB, freed %d KiB, took %s, partial %v, err %v, before %+v",
		res.Requested/mib, res.Freed>>10, res.Took, res.Partial, res.Err, res.Before)
	if res.Err != nil && !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Fatalf("Reclaim: %v, want EAGAIN taken as a partial result or the timeout", res.Err)
	}
	if !res.Partial {
		t.Errorf("Partial = false: the kernel reclaimed anonymous memory without swap?")
	}
	if res.Took > timeout+2*time.Second {
		t.Errorf("took %s: the write was not interrupted at the %s timeout", res.Took, timeout)
	}
	if res.Before.Anon < 30*mib {
		t.Errorf("before: anon %d MiB, want the hog's 32 MiB read from memory.stat", res.Before.Anon/mib)
	}
	if err := syscall.Kill(hog.Pid, 0); err != nil {
		t.Errorf("the hog is gone: %v", err)
	}
	if got := oomKillsV2(t, dir); got != 0 {
		t.Errorf("memory.events oom_kill %d, want 0", got)
	}
}
