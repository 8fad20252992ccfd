package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// LockHolder is what the holder of the node lock writes into the lock file, so a waiter can say
// who it waits for and how to stop it, instead of waiting silently.
type LockHolder struct {
	// PID and StartTime identify a process that keeps the lock (a test binary, or the kubelet of
	// a detached cluster, which inherited the lock's descriptor); a dead one makes the record stale.
	PID       int       `json:"pid"`
	StartTime uint64    `json:"startTime"`
	Command   string    `json:"command"`
	Since     time.Time `json:"since"`
	// Detached is true for a cluster started by hack/cluster.sh up or make demo, which holds the
	// lock until it is taken down: waiting for it is waiting forever.
	Detached bool   `json:"detached,omitempty"`
	StateDir string `json:"stateDir,omitempty"`
	// Stop says how to end the holder.
	Stop string `json:"stop"`
}

// ErrNodeLockedByDetachedCluster is returned at once, without waiting, when a detached cluster
// holds the node lock.
var ErrNodeLockedByDetachedCluster = errors.New("a detached cluster holds the node lock")

// lockProgressEvery is how often a waiter for the node lock says it still waits.
const lockProgressEvery = 30 * time.Second

// selfHolder describes this process as the lock holder.
func selfHolder(now time.Time) LockHolder {
	st, _ := procStartTime(os.Getpid())
	return LockHolder{PID: os.Getpid(), StartTime: st, Command: strings.Join(os.Args, " "), Since: now.UTC(),
		Stop: "it releases the lock when it ends; to stop it earlier: kill " + fmt.Sprint(os.Getpid())}
}

// writeHolder replaces the record in the lock file f (held by the caller).
func writeHolder(f *os.File, h LockHolder) error {
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := f.Truncate(0); err != nil {
		return fmt.Errorf("write node lock holder: %w", err)
	}
	if _, err := f.WriteAt(append(data, '\n'), 0); err != nil {
		return fmt.Errorf("write node lock holder: %w", err)
	}
	return nil
}

// readHolder reads the record of the lock file; ok is false when there is none, it does not
// parse, or the process it names is gone (a holder that wrote no record, e.g. an older harness).
func readHolder(f *os.File) (h LockHolder, ok bool) {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<16))
	if err != nil || json.Unmarshal(data, &h) != nil || h.PID <= 0 {
		return LockHolder{}, false
	}
	return h, (&Process{PID: h.PID, StartTime: h.StartTime}).Alive()
}

// describeHolder is one line on who holds the lock at path and how to stop it.
func describeHolder(path string, h LockHolder, ok bool) string {
	if !ok {
		return fmt.Sprintf("held by a process that left no record in %s (see `fuser -v %s`)", path, path)
	}
	what := fmt.Sprintf("pid %d %q", h.PID, h.Command)
	if h.Detached {
		what = fmt.Sprintf("the detached cluster in %s (kubelet pid %d)", h.StateDir, h.PID)
	}
	return fmt.Sprintf("held by %s since %s (%s ago); %s", what, h.Since.Format(time.RFC3339),
		time.Since(h.Since).Round(time.Second), h.Stop)
}

// acquireLock takes an exclusive flock on path, waiting until ctx is done. The lock is held
// as long as the returned file (or a copy of its descriptor in a child process) is open.
//
// When another holder has it, progress gets a line at once naming the holder and how to stop
// it, and another every `every` while the wait lasts; a detached cluster (which never releases
// it by itself) fails at once with ErrNodeLockedByDetachedCluster. It waits in a blocking flock
// (the kernel wakes a blocked waiter at release, so waiters are served roughly in turn, unlike
// polling); if ctx ends first, the waiting goroutine releases the lock as soon as it gets it.
func acquireLock(ctx context.Context, path string, progress func(string), every time.Duration) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open node lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
		return f, nil
	}
	if h, ok := readHolder(f); ok && h.Detached {
		f.Close()
		return nil, detachedError(path, h)
	}
	start := time.Now()
	progress(fmt.Sprintf("waiting for the node lock %s: %s", path, describeFile(path, f)))
	got := make(chan error, 1)
	go func() {
		for {
			err := unix.Flock(int(f.Fd()), unix.LOCK_EX)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			got <- err
			return
		}
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case err := <-got:
			if err != nil {
				f.Close()
				return nil, fmt.Errorf("lock %s: %w", path, err)
			}
			progress(fmt.Sprintf("got the node lock %s after %s", path, time.Since(start).Round(time.Second)))
			return f, nil
		case <-tick.C:
			progress(fmt.Sprintf("still waiting for the node lock %s after %s: %s", path,
				time.Since(start).Round(time.Second), describeFile(path, f)))
		case <-ctx.Done():
			desc := describeFile(path, f)
			go func() {
				<-got
				f.Close()
			}()
			return nil, fmt.Errorf("lock %s: gave up after %s, %s: %w", path, time.Since(start).Round(time.Second), desc, ctx.Err())
		}
	}
}

// describeFile describes the holder recorded in the lock file f.
func describeFile(path string, f *os.File) string {
	h, ok := readHolder(f)
	return describeHolder(path, h, ok)
}

// tryLock takes the lock without waiting; ok is false when another holder has it.
func tryLock(path string) (f *os.File, ok bool, err error) {
	f, err = os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("open node lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", path, err)
	}
	return f, true, nil
}

// WaitNodeLock waits until no node holds the lock at path, saying who holds it at once and every
// `every` (progress), and returns without holding it. A detached cluster fails at once with
// ErrNodeLockedByDetachedCluster. `make test` calls it (hack/cluster.sh node-lock) before the tests,
// whose own waits `go test` would not show until their package ends.
func WaitNodeLock(ctx context.Context, path string, progress func(string), every time.Duration) error {
	f, err := acquireLock(ctx, path, progress, every)
	if err != nil {
		return err
	}
	return f.Close()
}

// CheckNodeLock says, without waiting, who holds the lock at path: "" when nobody does (the lock is
// left free), the holder's description when a test run does, and ErrNodeLockedByDetachedCluster when a
// detached cluster does (waiting for it would be waiting forever). `make test` calls it first, before
// its minute of lint (hack/cluster.sh node-lock --check).
func CheckNodeLock(path string) (string, error) {
	f, ok, err := tryLock(path)
	if err != nil {
		return "", err
	}
	if ok {
		return "", f.Close()
	}
	f, err = os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open node lock: %w", err)
	}
	defer f.Close()
	h, known := readHolder(f)
	if known && h.Detached {
		return "", detachedError(path, h)
	}
	return describeHolder(path, h, known), nil
}

// detachedError is the error of a node lock held by the detached cluster h.
func detachedError(path string, h LockHolder) error {
	return fmt.Errorf("node lock %s: %w (it never releases it by itself): %s", path, ErrNodeLockedByDetachedCluster,
		describeHolder(path, h, true))
}
