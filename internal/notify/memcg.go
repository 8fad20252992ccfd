package notify

// cgroup v1 memory threshold notifications, documented in
// https://docs.kernel.org/admin-guide/cgroup-v1/memory.html section 9 "Memory thresholds":
// open memory.usage_in_bytes, create an eventfd, write "<event_fd> <fd of memory.usage_in_bytes>
// <threshold>" to cgroup.event_control; the eventfd becomes readable when usage crosses the threshold
// in either direction. Closing the eventfd unregisters it.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"
)

// UsageThreshold is the kubelet's memcg threshold (eviction/memory_threshold_notifier.go): the usage at
// which the working set reaches capacity − threshold, i.e. capacity − threshold + inactive_file. ok is
// false when threshold ≥ capacity (no usage value can express it).
func UsageThreshold(capacity, threshold, inactiveFile uint64) (uint64, bool) {
	if threshold >= capacity {
		return 0, false
	}
	return capacity - threshold + inactiveFile, true
}

// MemcgThreshold is a cgroup v1 memory threshold notifier on one cgroup directory.
type MemcgThreshold struct {
	Dir string

	once      sync.Once
	mu        sync.Mutex
	loop      *epollSet
	usage     *os.File
	efd       int // current eventfd, -1 when unarmed
	threshold uint64
}

// NewMemcgThreshold opens dir/memory.usage_in_bytes; call SetThreshold to arm it, Run to wait.
func NewMemcgThreshold(dir string) (*MemcgThreshold, error) {
	if err := onFilesystem(dir, unix.CGROUP_SUPER_MAGIC); err != nil {
		return nil, fmt.Errorf("memcg threshold on %s: %w", dir, err)
	}
	usage, err := os.Open(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return nil, fmt.Errorf("memcg threshold: %w", err)
	}
	l, err := newEpollSet()
	if err != nil {
		usage.Close()
		return nil, err
	}
	return &MemcgThreshold{Dir: dir, loop: l, usage: usage, efd: -1}, nil
}

// SetThreshold registers a new threshold (bytes of usage) and drops the previous one.
func (n *MemcgThreshold) SetThreshold(bytes uint64) error {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return fmt.Errorf("eventfd: %w", err)
	}
	ctl := filepath.Join(n.Dir, "cgroup.event_control")
	line := fmt.Sprintf("%d %d %d", efd, n.usage.Fd(), bytes)
	if err := writeControl(ctl, line); err != nil {
		unix.Close(efd)
		return fmt.Errorf("memcg threshold %d on %s: %w", bytes, n.Dir, err)
	}
	if err := n.loop.add(efd, unix.EPOLLIN); err != nil {
		unix.Close(efd)
		return err
	}
	n.mu.Lock()
	old := n.efd
	n.efd, n.threshold = efd, bytes
	n.mu.Unlock()
	if old >= 0 {
		unix.Close(old) // unregisters the old threshold and removes it from the epoll set
	}
	return nil
}

// Threshold returns the armed threshold and whether one is armed.
func (n *MemcgThreshold) Threshold() (uint64, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.threshold, n.efd >= 0
}

// Run signals ch on every crossing until ctx is cancelled, then closes the notifier and returns nil.
func (n *MemcgThreshold) Run(ctx context.Context, ch chan<- struct{}) error {
	defer n.Close()
	return n.loop.run(ctx, func(fd int32, _ uint32) error {
		n.mu.Lock()
		defer n.mu.Unlock()
		if int(fd) != n.efd {
			return nil // an old, replaced eventfd
		}
		var buf [8]byte
		if _, err := unix.Read(n.efd, buf[:]); err != nil && !errors.Is(err, unix.EAGAIN) {
			return fmt.Errorf("read memcg eventfd: %w", err)
		}
		signal(ch)
		return nil
	})
}

// Close releases the notifier's descriptors; Run calls it on return, and calling it again is harmless.
func (n *MemcgThreshold) Close() error {
	n.once.Do(n.close)
	return nil
}

func (n *MemcgThreshold) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.efd >= 0 {
		unix.Close(n.efd)
		n.efd = -1
	}
	n.usage.Close()
	n.loop.close()
}

// writeControl writes one line to a kernel control file without O_CREATE or O_TRUNC.
func writeControl(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err // already an *os.PathError naming the file
	}
	return f.Close()
}
