package notify

// inotify on a cgroup file, documented in https://docs.kernel.org/admin-guide/cgroup-v2.html: "memory.events
// ... A value change in this file generates a file modified event" (likewise cgroup.events).

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// FileWatch signals when a file is modified (IN_MODIFY), e.g. cgroup v2 memory.events.
type FileWatch struct {
	Path string

	fd   int
	loop *epollSet
	once sync.Once
}

// WatchFile starts watching path for modifications.
func WatchFile(path string) (*FileWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("inotify_init1: %w", err)
	}
	if _, err := unix.InotifyAddWatch(fd, path, unix.IN_MODIFY); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("inotify_add_watch %s: %w", path, err)
	}
	l, err := newEpollSet()
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	if err := l.add(fd, unix.EPOLLIN); err != nil {
		unix.Close(fd)
		l.close()
		return nil, err
	}
	return &FileWatch{Path: path, fd: fd, loop: l}, nil
}

// Run signals ch once per batch of modification events until ctx is cancelled (returns nil).
func (w *FileWatch) Run(ctx context.Context, ch chan<- struct{}) error {
	defer w.Close()
	buf := make([]byte, 64*(unix.SizeofInotifyEvent+unix.NAME_MAX+1))
	return w.loop.run(ctx, func(int32, uint32) error {
		for {
			n, err := unix.Read(w.fd, buf)
			if errors.Is(err, unix.EAGAIN) || n == 0 {
				break
			}
			if err != nil {
				return fmt.Errorf("read inotify %s: %w", w.Path, err)
			}
		}
		signal(ch)
		return nil
	})
}

// Close stops watching and releases the descriptors.
func (w *FileWatch) Close() error {
	w.once.Do(func() {
		unix.Close(w.fd)
		w.loop.close()
	})
	return nil
}
