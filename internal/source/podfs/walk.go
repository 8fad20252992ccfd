package podfs

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// Limits bound the walk of one pod (its local volumes and its logs together), in memory and in time.
// A walk that reaches a limit stops there: the pod's usage is then a lower bound (Usage.Partial).
type Limits struct {
	// MaxEntries is how many directory entries a pod's walk may stat (0: DefaultMaxEntries).
	MaxEntries int
	// MaxDuration is how long a pod's walk may take (0: DefaultMaxDuration).
	MaxDuration time.Duration
	// MaxDepth is how many directories deep a walk descends (0: DefaultMaxDepth); each level holds one
	// open directory and at most one batch of its entries.
	MaxDepth int
	// MaxLinked is how many inodes with more than one hard link a walk remembers, to count each once
	// (0: DefaultMaxLinked). Inodes with a single link need no memory: they cannot be seen twice.
	MaxLinked int
}

// Defaults of Limits. Memory: a walk holds at most MaxDepth open directories with one batch of
// readBatch entries each, and MaxLinked inode numbers: under 8 MiB together, whatever the tree
// (TestWalkOfAMillionFilesStaysUnderItsMemoryBound measures it). Time: MaxEntries lstat calls, about
// a second on a tmpfs, and never more than MaxDuration.
const (
	DefaultMaxEntries  = 1_000_000
	DefaultMaxDuration = 2 * time.Second
	DefaultMaxDepth    = 128
	DefaultMaxLinked   = 65536
)

// readBatch is how many entries are read from a directory at a time (getdents in batches, never the
// whole directory).
const readBatch = 128

func (l Limits) withDefaults() Limits {
	if l.MaxEntries <= 0 {
		l.MaxEntries = DefaultMaxEntries
	}
	if l.MaxDuration <= 0 {
		l.MaxDuration = DefaultMaxDuration
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxLinked <= 0 {
		l.MaxLinked = DefaultMaxLinked
	}
	return l
}

// budget is what is left of one pod's Limits.
type budget struct {
	limits   Limits
	entries  int
	deadline time.Time
	now      func() time.Time
	// stopped is why the walk stopped early ("" while within the limits).
	stopped string
}

func newBudget(l Limits, now func() time.Time) *budget {
	l = l.withDefaults()
	return &budget{limits: l, entries: l.MaxEntries, deadline: now().Add(l.MaxDuration), now: now}
}

// take spends one entry; it is false once a limit is reached (the time is checked every 1024 entries).
func (b *budget) take() bool {
	if b.stopped != "" {
		return false
	}
	if b.entries <= 0 {
		b.stopped = fmt.Sprintf("more than %d entries", b.limits.MaxEntries)
		return false
	}
	b.entries--
	if b.entries%1024 == 0 && b.now().After(b.deadline) {
		b.stopped = fmt.Sprintf("longer than %s", b.limits.MaxDuration)
		return false
	}
	return true
}

func (b *budget) stop(why string) {
	if b.stopped == "" {
		b.stopped = why
	}
}

// dirFrame is one open directory of the walk and the entries of its current batch not visited yet.
type dirFrame struct {
	f     *os.File
	names []string
}

// walk measures root within b (see DiskUsage). Partial is set when b ran out during this walk.
func walk(root string, b *budget) (Usage, error) {
	var st unix.Stat_t
	if err := unix.Lstat(root, &st); err != nil {
		return Usage{}, &os.PathError{Op: "lstat", Path: root, Err: err}
	}
	u := Usage{Bytes: uint64(st.Blocks) * 512, Inodes: 1}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return u, nil
	}
	dev := st.Dev
	linked := map[uint64]struct{}{}
	f, err := os.Open(root)
	if err != nil {
		return u, err
	}
	stack := []dirFrame{{f: f}}
	defer func() {
		for _, fr := range stack {
			fr.f.Close()
		}
	}()
	for len(stack) > 0 && b.stopped == "" {
		top := &stack[len(stack)-1]
		if len(top.names) == 0 {
			names, err := top.f.Readdirnames(readBatch)
			if len(names) == 0 {
				top.f.Close()
				stack = stack[:len(stack)-1]
				if err != nil && !errors.Is(err, io.EOF) {
					return u, err
				}
				continue
			}
			top.names = names
		}
		name := top.names[0]
		top.names = top.names[1:]
		if !b.take() {
			break
		}
		dirfd := int(top.f.Fd())
		var s unix.Stat_t
		if err := unix.Fstatat(dirfd, name, &s, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) { // removed during the walk
				continue
			}
			return u, &os.PathError{Op: "lstat", Path: top.f.Name() + "/" + name, Err: err}
		}
		isDir := s.Mode&unix.S_IFMT == unix.S_IFDIR
		if !isDir && s.Nlink > 1 {
			if _, ok := linked[s.Ino]; ok {
				continue
			}
			if len(linked) >= b.limits.MaxLinked {
				b.stop(fmt.Sprintf("more than %d hard-linked inodes", b.limits.MaxLinked))
				break
			}
			linked[s.Ino] = struct{}{}
		}
		u.Inodes++
		if s.Dev != dev { // a mount point: one inode, not descended into, its bytes not ours
			continue
		}
		u.Bytes += uint64(s.Blocks) * 512
		if !isDir {
			continue
		}
		if len(stack) >= b.limits.MaxDepth {
			b.stop(fmt.Sprintf("deeper than %d directories", b.limits.MaxDepth))
			break
		}
		fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
				continue
			}
			return u, &os.PathError{Op: "open", Path: top.f.Name() + "/" + name, Err: err}
		}
		stack = append(stack, dirFrame{f: os.NewFile(uintptr(fd), top.f.Name()+"/"+name)})
	}
	u.Partial = b.stopped != ""
	return u, nil
}
