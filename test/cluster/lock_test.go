package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// The helper process of the lock tests: it takes the lock at $PRESSURE_TEST_LOCK_HOLD, records
// itself (detached when $PRESSURE_TEST_LOCK_DETACHED is set), says "held" and keeps the lock
// until its stdin closes.
func TestMain(m *testing.M) {
	if path := os.Getenv("PRESSURE_TEST_LOCK_HOLD"); path != "" {
		os.Exit(holdLock(path, os.Getenv("PRESSURE_TEST_LOCK_DETACHED") != ""))
	}
	os.Exit(m.Run())
}

func holdLock(path string, detached bool) int {
	f, err := acquireLock(context.Background(), path, func(string) {}, time.Hour)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	h := selfHolder(time.Now())
	h.Command = "lock-holder-under-test"
	if detached {
		h.Detached, h.StateDir, h.Stop = true, "/tmp/state-under-test", "stop it with `make demo-down` (hack/cluster.sh down)"
	}
	if err := writeHolder(f, h); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("held")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until the test closes stdin
	return 0
}

// startHolder runs the helper process on path and returns once it holds the lock; release ends it.
func startHolder(t *testing.T, path string, detached bool) (pid int, release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PRESSURE_TEST_LOCK_HOLD="+path)
	if detached {
		cmd.Env = append(cmd.Env, "PRESSURE_TEST_LOCK_DETACHED=1")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(stdout).ReadString('\n'); line != "held\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("lock holder said %q, want held", line)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			stdin.Close()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(release)
	return cmd.Process.Pid, release
}

// lines collects progress lines safely.
type lines struct {
	mu sync.Mutex
	l  []string
}

func (l *lines) add(s string) { l.mu.Lock(); l.l = append(l.l, s); l.mu.Unlock() }
func (l *lines) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.l...)
}

func TestWaiterSaysAtOnceWhoHoldsTheLockAndKeepsSayingIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.lock")
	pid, release := startHolder(t, path, false)
	var got lines
	done := make(chan error, 1)
	go func() {
		f, err := acquireLock(context.Background(), path, got.add, 50*time.Millisecond)
		if err == nil {
			f.Close()
		}
		done <- err
	}()
	deadline := time.Now().Add(30 * time.Second)
	for len(got.get()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	release()
	if err := <-done; err != nil {
		t.Fatalf("acquireLock after the holder ended: %v", err)
	}
	l := got.get()
	if len(l) < 4 {
		t.Fatalf("progress lines %q: want the holder at once, periodic lines and the acquisition", l)
	}
	first := l[0]
	for _, want := range []string{"waiting for the node lock " + path, fmt.Sprintf("pid %d", pid), "lock-holder-under-test", "kill " + fmt.Sprint(pid)} {
		if !strings.Contains(first, want) {
			t.Errorf("first line %q lacks %q", first, want)
		}
	}
	for _, s := range l[1 : len(l)-1] {
		if !strings.HasPrefix(s, "still waiting for the node lock ") || !strings.Contains(s, fmt.Sprintf("pid %d", pid)) {
			t.Errorf("periodic line %q: want still waiting ... and the holder", s)
		}
	}
	if last := l[len(l)-1]; !strings.HasPrefix(last, "got the node lock") {
		t.Errorf("last line %q: want got the node lock", last)
	}
}

func TestDetachedClusterHoldingTheLockFailsAtOnceWithHowToStopIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.lock")
	startHolder(t, path, true)
	var got lines
	start := time.Now()
	_, err := acquireLock(context.Background(), path, got.add, 50*time.Millisecond)
	if !errors.Is(err, ErrNodeLockedByDetachedCluster) {
		t.Fatalf("acquireLock = %v, want ErrNodeLockedByDetachedCluster", err)
	}
	for _, want := range []string{"/tmp/state-under-test", "make demo-down"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %s: a detached holder must fail at once", d)
	}
}

func TestGivingUpNamesTheHolder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.lock")
	pid, _ := startHolder(t, path, false)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := acquireLock(ctx, path, func(string) {}, time.Hour)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", pid)) {
		t.Errorf("acquireLock = %v, want a deadline error naming pid %d", err, pid)
	}
}

func TestStaleHolderRecordIsNotBelieved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "node.lock")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A record of a process that is gone: our pid with a start time that is not ours (pid reused).
	if err := writeHolder(f, LockHolder{PID: os.Getpid(), StartTime: 1, Command: "gone", Detached: true}); err != nil {
		t.Fatal(err)
	}
	if _, ok := readHolder(f); ok {
		t.Errorf("a record whose process start time differs was believed")
	}
	if d := describeFile(path, f); !strings.Contains(d, "left no record") {
		t.Errorf("describe %q: want the unknown-holder line", d)
	}
}

// TestCheckSaysWhoHoldsTheLockWithoutWaiting: make test checks the lock before its minute of lint:
// a detached cluster fails at once, a test run is named (the tests will wait for it, saying so), and a
// free lock is left free.
func TestCheckSaysWhoHoldsTheLockWithoutWaiting(t *testing.T) {
	dir := t.TempDir()
	free := filepath.Join(dir, "free.lock")
	if held, err := CheckNodeLock(free); err != nil || held != "" {
		t.Errorf("free lock: %q, %v; want nothing", held, err)
	}
	if f, ok, err := tryLock(free); err != nil || !ok {
		t.Errorf("the check left the free lock held (%v, %v)", ok, err)
	} else {
		f.Close()
	}

	busy := filepath.Join(dir, "busy.lock")
	pid, _ := startHolder(t, busy, false)
	start := time.Now()
	held, err := CheckNodeLock(busy)
	if err != nil || !strings.Contains(held, fmt.Sprintf("pid %d", pid)) || !strings.Contains(held, "lock-holder-under-test") {
		t.Errorf("lock held by a test run: %q, %v; want its pid and command", held, err)
	}

	detached := filepath.Join(dir, "detached.lock")
	startHolder(t, detached, true)
	if _, err := CheckNodeLock(detached); !errors.Is(err, ErrNodeLockedByDetachedCluster) ||
		!strings.Contains(err.Error(), "make demo-down") {
		t.Errorf("lock held by a detached cluster: %v, want ErrNodeLockedByDetachedCluster with how to stop it", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the checks took %s: they must not wait", d)
	}
}
