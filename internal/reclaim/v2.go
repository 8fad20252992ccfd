package reclaim

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// minProgressDiv: a chunk whose write succeeded but lowered memory.current by less than chunk/minProgressDiv
// reclaimed next to nothing (what it freed was charged again at once, or the kernel counted pages it did not
// free from this cgroup): the loop stops there instead of writing more.
const minProgressDiv = 16

// interruptEvery is how often an interrupted write's thread is signalled again until its write returns.
const interruptEvery = 10 * time.Millisecond

// currentOf reads the v2 cgroup dir's memory.current.
func currentOf(dir string) func() (int64, error) {
	path := filepath.Join(dir, "memory.current")
	return func() (int64, error) {
		v, err := readFile(path, parseBytes)
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", path, err)
		}
		return v, nil
	}
}

// reclaimV2 writes to dir's memory.reclaim in chunks until bytes were written or the usage (current, see
// currentOf) fell by bytes, whichever comes first: the kernel's reclaim overshoots a write (measured in the
// guest: a 64 MiB write lowered memory.current by about 94 MiB, a 16 MiB one by 16 to 27 MiB), so the
// measured fall ends the loop early. It stops with partial set when the kernel gives up on a chunk (EAGAIN,
// no error), when a chunk lowered the usage by next to nothing (no error), and when ctx ends (the error
// wraps ctx's), also in the middle of a write (see writeInterruptible).
func reclaimV2(ctx context.Context, dir string, bytes, chunk int64, current func() (int64, error)) (partial bool, err error) {
	path := filepath.Join(dir, "memory.reclaim")
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, fmt.Errorf("open %s: %w", path, err)
	}
	defer unix.Close(fd)
	start, err := current()
	if err != nil {
		return false, err
	}
	written, prev := int64(0), start
	for {
		left := bytes - max(written, start-prev)
		if left <= 0 {
			return false, nil
		}
		if err := expired(ctx); err != nil {
			return true, fmt.Errorf("write %s: stopped with %d of %d bytes left: %w", path, left, bytes, err)
		}
		n := min(chunk, left)
		s := strconv.FormatInt(n, 10)
		if err := writeInterruptible(ctx, fd, s); err != nil {
			switch {
			case errors.Is(err, unix.EAGAIN):
				return true, nil
			case errors.Is(err, unix.EINTR) && ctx.Err() != nil:
				return true, fmt.Errorf("write %q to %s: interrupted with %d of %d bytes left: %w", s, path, left, bytes, ctx.Err())
			case errors.Is(err, unix.EINTR):
				// Another signal (the deadline bounds the retries): measure what the pass freed and go on.
				if prev, err = current(); err != nil {
					return true, err
				}
				continue
			}
			return true, fmt.Errorf("write %q to %s: %w", s, path, err)
		}
		written += n
		after, err := current()
		if err != nil {
			return true, err
		}
		if written < bytes && start-after < bytes && prev-after < n/minProgressDiv {
			return true, nil
		}
		prev = after
	}
}

// writeInterruptible writes s to fd (one write system call, not retried on EINTR) and, when ctx ends first,
// interrupts it: memory.reclaim's kernel loop returns EINTR when its thread has a signal pending (checked
// between its reclaim passes, so a pass that is reclaiming runs on), so the write runs on a locked thread
// that is sent SIGURG (which the Go runtime takes for a preemption request and otherwise ignores) every
// interruptEvery until the write returns.
//
// fd is a raw descriptor, not an os.File: os.OpenFile registers a cgroup file with the runtime poller
// (kernfs files support poll) and makes it non-blocking, and the poller then takes memory.reclaim's EAGAIN
// (the kernel gave up) for "not ready" and parks the write until the file polls writable again, which
// never happens: that, not the kernel, was the write that blocked past 3 minutes in the guest.
func writeInterruptible(ctx context.Context, fd int, s string) error {
	tid := make(chan int, 1)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid <- unix.Gettid()
		_, err := unix.Write(fd, []byte(s))
		done <- err
	}()
	thread := <-tid
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	tick := time.NewTicker(interruptEvery)
	defer tick.Stop()
	for {
		_ = unix.Tgkill(unix.Getpid(), thread, unix.SIGURG)
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
	}
}
