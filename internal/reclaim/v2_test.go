package reclaim

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A write that blocks in the kernel ends at the deadline with EINTR. The kernel here is a unix socket whose
// buffer is full and whose send timeout is set (a signal then ends the write with EINTR instead of
// restarting it, as memory.reclaim's loop does); without the interruption the write would wait the 20 s.
func TestWriteInterruptibleEndsABlockedWriteAtTheDeadline(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	if err := unix.SetsockoptInt(fds[0], unix.SOL_SOCKET, unix.SO_SNDBUF, 4096); err != nil {
		t.Fatal(err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := unix.Write(fds[0], make([]byte, 4096)); errors.Is(err, unix.EAGAIN) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if err := unix.SetNonblock(fds[0], false); err != nil {
		t.Fatal(err)
	}
	tv := unix.NsecToTimeval((20 * time.Second).Nanoseconds())
	if err := unix.SetsockoptTimeval(fds[0], unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	err = writeInterruptible(ctx, fds[0], strings.Repeat("x", 65536))
	took := time.Since(start)
	t.Logf("blocked write ended after %s: %v", took, err)
	if !errors.Is(err, unix.EINTR) {
		t.Errorf("err = %v, want EINTR from the interrupted write", err)
	}
	if took > 5*time.Second {
		t.Errorf("took %s, want about the 200 ms deadline", took)
	}
}
