package cgroupfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/parse"
)

// Sampler gives memory.available and allocatableMemory.available as Reader.NodeMemory and
// Reader.AllocatableMemory do, for a caller that reads them many times a second (the agent's adaptive
// poll). It keeps each cgroup file open and reads it again with pread at offset 0, which makes the
// kernel generate the content anew (seq_file: a read at offset 0 restarts the file); a read that fails
// (the cgroup was removed: ENODEV) opens the path again once. Files on other filesystems (fixture
// trees) are opened for each read. It reads into one buffer, takes from memory.stat
// only the keys it uses, and does not read the root's memory.limit_in_bytes (memory.available does not
// use it). It is not safe for concurrent use; Close closes its files.
type Sampler struct {
	r          *Reader
	node, pods memoryFiles
	buf        []byte
	vals       [3]uint64 // by the index of memoryFiles.keys
}

// The memory.stat keys a sample uses, all required, in the order readMemoryV1, readMemoryV2 and
// readRootV2 look for them; the inactive file pages are the last.
var (
	v1SampleKeys     = []string{"total_inactive_file"}
	v2SampleKeys     = []string{"inactive_file"}
	v2RootSampleKeys = []string{"anon", "file", "inactive_file"}
)

// memoryFiles are the open files of one memory cgroup; usage and limit are unused (path "") where
// the sample does not read them.
type memoryFiles struct {
	usage, limit, stat keptFile
	keys               []string // picked from memory.stat
	limitOrMax         bool     // memory.max ("max" is unlimited)
	v2Root             bool     // usage is anon + file of memory.stat
}

// NewSampler returns a Sampler of r's layout. It opens nothing until the first sample.
func (r *Reader) NewSampler() *Sampler {
	l := r.Layout
	s := &Sampler{r: r, buf: make([]byte, 0, 8192)}
	s.node = newMemoryFiles(l, "", false)
	if l.Driver != DriverNone {
		s.pods = newMemoryFiles(l, l.PodsCgroup, true)
	}
	return s
}

func newMemoryFiles(l Layout, rel string, withLimit bool) memoryFiles {
	dir := filepath.Join(l.Memory, rel)
	m := memoryFiles{stat: keptFile{path: filepath.Join(dir, "memory.stat")}, keys: v2SampleKeys}
	switch {
	case l.Version == V1:
		m.keys = v1SampleKeys
		m.usage.path = filepath.Join(dir, "memory.usage_in_bytes")
		if withLimit {
			m.limit.path = filepath.Join(dir, "memory.limit_in_bytes")
		}
	case rel == "" || rel == "/" || rel == ".":
		m.v2Root, m.keys = true, v2RootSampleKeys
	default:
		m.usage.path = filepath.Join(dir, "memory.current")
		m.limitOrMax = true
		if withLimit {
			m.limit.path = filepath.Join(dir, "memory.max")
		}
	}
	return m
}

// sample is what one read of a cgroup gives: Memory without its pointer and its Stat, so that a read
// does not allocate.
type sample struct {
	usage, inactiveFile, limit uint64
	limited                    bool // limit ≤ Unlimited
}

func (m sample) workingSet() uint64 {
	return Memory{Usage: m.usage, InactiveFile: m.inactiveFile}.WorkingSet()
}

// NodeMemory is Reader.NodeMemory.
func (s *Sampler) NodeMemory(now time.Time, memTotal uint64) (signal.Observation, error) {
	m, err := s.read(&s.node)
	if err != nil {
		return signal.Observation{}, fmt.Errorf("memory.available: %w", err)
	}
	return signal.Observation{Available: int64(memTotal) - int64(m.workingSet()), Capacity: int64(memTotal),
		Time: now, Source: signal.SourceCgroupfs}, nil
}

// AllocatableMemory is Reader.AllocatableMemory.
func (s *Sampler) AllocatableMemory(now time.Time) (signal.Observation, error) {
	if s.r.Layout.Driver == DriverNone {
		return signal.Observation{}, fmt.Errorf("allocatableMemory.available: %w", ErrNoPodsCgroup)
	}
	m, err := s.read(&s.pods)
	if err != nil {
		return signal.Observation{}, fmt.Errorf("allocatableMemory.available: %w", err)
	}
	if !m.limited {
		return signal.Observation{}, fmt.Errorf("allocatableMemory.available: %s: %w", s.r.Layout.PodsCgroup, ErrUnlimited)
	}
	return signal.Observation{Available: int64(m.limit) - int64(m.workingSet()), Capacity: int64(m.limit),
		Time: now, Source: signal.SourceCgroupfs}, nil
}

// Close closes the files the samples opened.
func (s *Sampler) Close() error {
	var errs []error
	for _, f := range []*keptFile{&s.node.usage, &s.node.limit, &s.node.stat, &s.pods.usage, &s.pods.limit, &s.pods.stat} {
		errs = append(errs, f.close())
	}
	return errors.Join(errs...)
}

// read reads the usage, the limit (when m has one) and the inactive file pages of m, in the order and
// with the errors of readMemoryV1, readMemoryV2 and readRootV2.
func (s *Sampler) read(m *memoryFiles) (sample, error) {
	var out sample
	if m.usage.path != "" {
		v, err := s.single(&m.usage, false)
		if err != nil {
			return sample{}, err
		}
		out.usage = v
	}
	if m.limit.path != "" {
		v, err := s.single(&m.limit, m.limitOrMax)
		if err != nil {
			return sample{}, err
		}
		out.limit, out.limited = v, v <= Unlimited // limitOrNil's cut
	}
	return s.stat(m, out)
}

func (s *Sampler) single(f *keptFile, orMax bool) (uint64, error) {
	b, err := f.read(s.buf[:0])
	if err != nil {
		return 0, fmt.Errorf("cgroupfs: %w", err)
	}
	s.buf = b[:0]
	if orMax {
		return parse.SingleUintOrMaxBytes(b, f.path)
	}
	return parse.SingleUintBytes(b, f.path)
}

// stat fills out's inactiveFile (and, for the v2 root, usage) from memory.stat.
func (s *Sampler) stat(m *memoryFiles, out sample) (sample, error) {
	b, err := m.stat.read(s.buf[:0])
	if err != nil {
		return sample{}, fmt.Errorf("cgroupfs: %w", err)
	}
	s.buf = b[:0]
	found, err := parse.PickKeyValues(b, m.stat.path, m.keys, s.vals[:])
	if err != nil {
		return sample{}, err
	}
	for i, k := range m.keys {
		if found&(1<<i) == 0 {
			return sample{}, &parse.Error{Path: m.stat.path, Value: k, Err: parse.ErrMissing}
		}
	}
	out.inactiveFile = s.vals[len(m.keys)-1]
	if m.v2Root {
		out.usage = s.vals[0] + s.vals[1] // anon + file
	}
	return out, nil
}

// keptFile is a file kept open between reads, where it is a cgroup file.
type keptFile struct {
	path string
	fd   int
	open bool
}

// read returns the whole content of f, appended to buf, with errors as readAllInto's (*os.PathError).
// The file is opened at the first read and again after a read that failed. Only a file on a cgroup
// filesystem is kept open: the kernel regenerates it for each read at offset 0 and removes it only with
// its cgroup, after which a read fails (ENODEV). A file elsewhere (a fixture tree, where a test may
// replace a file by renaming another over it) is opened for each read, as readAllInto does.
func (f *keptFile) read(buf []byte) ([]byte, error) {
	if f.open {
		if b, err := preadAll(f.fd, buf); err == nil {
			return b, nil
		}
		_ = f.close() // the cgroup was removed: open the path again
	}
	fd, err := openRead(f.path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: f.path, Err: err}
	}
	f.fd, f.open = fd, true
	b, err := preadAll(fd, buf)
	if err != nil || !onCgroupfs(fd) {
		_ = f.close()
	}
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: f.path, Err: err}
	}
	return b, nil
}

// onCgroupfs reports whether fd is a file of a cgroup v1 or v2 filesystem.
func onCgroupfs(fd int) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(fd, &st); err != nil {
		return false
	}
	return int64(st.Type) == CgroupSuperMagic || int64(st.Type) == Cgroup2SuperMagic
}

func (f *keptFile) close() error {
	if !f.open {
		return nil
	}
	f.open = false
	return unix.Close(f.fd)
}

// preadAll reads fd from offset 0 to its end into buf (from its length on, grown when full).
func preadAll(fd int, buf []byte) ([]byte, error) {
	start := len(buf)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := unix.Pread(fd, buf[len(buf):cap(buf)], int64(len(buf)-start))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return buf, nil
		}
		buf = buf[:len(buf)+n]
	}
}
