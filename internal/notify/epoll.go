package notify

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// signal sends a wake-up without blocking: if one is already pending, this one coalesces into it.
func signal(ch chan<- struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// epollSet is an epoll set plus an eventfd used to stop the wait when the context is cancelled.
type epollSet struct {
	epfd   int
	stopfd int
}

func newEpollSet() (*epollSet, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	stopfd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	l := &epollSet{epfd: epfd, stopfd: stopfd}
	if err := l.add(stopfd, unix.EPOLLIN); err != nil {
		l.close()
		return nil, err
	}
	return l, nil
}

func (l *epollSet) add(fd int, events uint32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd)}
	if err := unix.EpollCtl(l.epfd, unix.EPOLL_CTL_ADD, fd, &ev); err != nil {
		return fmt.Errorf("epoll_ctl add fd %d: %w", fd, err)
	}
	return nil
}

// stop wakes a running wait so it returns.
func (l *epollSet) stop() {
	_, _ = unix.Write(l.stopfd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
}

// run waits for events and passes each to handle until ctx is done (returns nil) or handle fails.
func (l *epollSet) run(ctx context.Context, handle func(fd int32, events uint32) error) error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait() // the stopper must be gone before the caller closes stopfd
	defer close(done)
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
			l.stop()
		case <-done:
		}
	}()
	evs := make([]unix.EpollEvent, 8)
	for {
		n, err := unix.EpollWait(l.epfd, evs, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range evs[:n] {
			if int(ev.Fd) == l.stopfd {
				return nil
			}
			if err := handle(ev.Fd, ev.Events); err != nil {
				return err
			}
		}
	}
}

func (l *epollSet) close() {
	unix.Close(l.stopfd)
	unix.Close(l.epfd)
}
