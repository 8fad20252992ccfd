package notify

// PSI triggers, documented in https://docs.kernel.org/accounting/psi.html section "Monitoring for
// pressure thresholds": write "<some|full> <stall us> <window us>" to an open PSI file (O_RDWR), then
// poll it for POLLPRI; the kernel raises it at most once per window while stall time within the window
// exceeds the threshold. Writers without CAP_SYS_RESOURCE may only use windows that are multiples of
// 2 s (the kernel's unprivileged rule); other windows fail with EINVAL.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// ErrTriggerRejected reports that the kernel refused a PSI trigger; it wraps the errno.
var ErrTriggerRejected = errors.New("psi trigger rejected")

// ErrTriggerGone reports that the PSI file went away (its cgroup was removed) while armed.
var ErrTriggerGone = errors.New("psi trigger gone")

// PSITrigger is an armed PSI trigger.
type PSITrigger struct {
	Path string
	Spec string // what was written, e.g. "some 150000 2000000"

	fd   int
	loop *epollSet
	once sync.Once
}

// TriggerSpec formats a trigger: kind is "some" or "full", stall and window are rounded to microseconds.
func TriggerSpec(kind string, stall, window time.Duration) string {
	return fmt.Sprintf("%s %d %d", kind, stall.Microseconds(), window.Microseconds())
}

// ArmPSI opens path (a cgroup2 memory.pressure or /proc/pressure/memory) and writes the trigger.
// A rejected trigger returns an error wrapping ErrTriggerRejected and the errno (EINVAL for a window
// the kernel does not allow this writer, EOPNOTSUPP or ENOENT where PSI is off).
func ArmPSI(path, kind string, stall, window time.Duration) (*PSITrigger, error) {
	spec := TriggerSpec(kind, stall, window)
	if err := onFilesystem(path, unix.PROC_SUPER_MAGIC, unix.CGROUP2_SUPER_MAGIC); err != nil {
		return nil, fmt.Errorf("arm psi trigger on %s: %w: %w", path, ErrTriggerRejected, err)
	}
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w: %w", path, ErrTriggerRejected, err)
	}
	if _, err := unix.Write(fd, append([]byte(spec), 0)); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("write %q to %s: %s (%s): %w: %w", spec, path, unix.ErrnoName(errnoOf(err)), hint(err), ErrTriggerRejected, err)
	}
	l, err := newEpollSet()
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := l.add(fd, unix.EPOLLPRI); err != nil {
		unix.Close(fd)
		l.close()
		return nil, err
	}
	return &PSITrigger{Path: path, Spec: spec, fd: fd, loop: l}, nil
}

func errnoOf(err error) unix.Errno {
	var e unix.Errno
	errors.As(err, &e)
	return e
}

// hint explains the errno a trigger write most often gets.
func hint(err error) string {
	switch errnoOf(err) {
	case unix.EINVAL:
		return "bad trigger; without CAP_SYS_RESOURCE the window must be a multiple of 2s"
	case unix.EOPNOTSUPP:
		return "psi disabled"
	case unix.EBUSY:
		return "a trigger is already armed on this file descriptor"
	}
	return "unexpected"
}

// Run signals ch each time the kernel raises the trigger, until ctx is cancelled (returns nil) or the
// file goes away (returns an error wrapping ErrTriggerGone).
func (p *PSITrigger) Run(ctx context.Context, ch chan<- struct{}) error {
	defer p.Close()
	return p.loop.run(ctx, func(_ int32, ev uint32) error {
		if ev&unix.EPOLLERR != 0 {
			return fmt.Errorf("%s: %w", p.Path, ErrTriggerGone)
		}
		if ev&unix.EPOLLPRI != 0 {
			signal(ch)
		}
		return nil
	})
}

// Close disarms the trigger (closing the file destroys it) and releases the descriptors.
func (p *PSITrigger) Close() error {
	p.once.Do(func() {
		unix.Close(p.fd)
		p.loop.close()
	})
	return nil
}

// ErrNotKernelFile reports a path that is not on the kernel filesystem a mechanism needs: writing a
// trigger or an event_control line to an ordinary file would only corrupt it.
var ErrNotKernelFile = errors.New("not a kernel control file")

// onFilesystem checks that path lives on a filesystem with one of the statfs magics.
func onFilesystem(path string, magics ...int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	for _, m := range magics {
		if int64(st.Type) == m {
			return nil
		}
	}
	return fmt.Errorf("filesystem magic %#x: %w", st.Type, ErrNotKernelFile)
}
