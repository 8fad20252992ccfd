package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// acquireLock takes an exclusive flock on path, waiting until ctx is done. The lock is held
// as long as the returned file (or a copy of its descriptor in a child process) is open.
//
// It waits in a blocking flock (the kernel wakes a blocked waiter at release, so waiters are
// served roughly in turn, unlike polling); if ctx ends first, the waiting goroutine releases
// the lock as soon as it gets it.
func acquireLock(ctx context.Context, path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open node lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err == nil {
		return f, nil
	}
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
	select {
	case err := <-got:
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		return f, nil
	case <-ctx.Done():
		go func() {
			<-got
			f.Close()
		}()
		return nil, fmt.Errorf("lock %s: another node holds it: %w", path, ctx.Err())
	}
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
