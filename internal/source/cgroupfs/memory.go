package cgroupfs

// Memory controller files. cgroup v1: https://docs.kernel.org/admin-guide/cgroup-v1/memory.html
// (memory.usage_in_bytes, memory.limit_in_bytes, memory.stat "total_inactive_file 1613541376").
// cgroup v2: https://docs.kernel.org/admin-guide/cgroup-v2.html (memory.current, memory.max "max" or
// bytes, memory.stat "inactive_file 2011136", memory.events "high 0").

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

// Unlimited is the kubelet's cut-off: a limit above 2^62 bytes counts as no limit (cAdvisor).
const Unlimited = uint64(1) << 62

// Memory is the memory usage of one cgroup as the kubelet sees it.
type Memory struct {
	// Usage is memory.usage_in_bytes (v1), memory.current (v2) or anon+file of memory.stat (v2 root).
	Usage uint64
	// InactiveFile is total_inactive_file (v1) or inactive_file (v2) of memory.stat.
	InactiveFile uint64
	// Limit is memory.limit_in_bytes (v1) or memory.max (v2); nil when unlimited (> 2^62) or, for a
	// root cgroup, when there is no limit file.
	Limit *uint64
	// Stat is the parsed memory.stat (ReclaimStat picks the reclaim fields).
	Stat map[string]uint64
}

// WorkingSet is usage − inactive_file, floored at 0 (cAdvisor setMemoryStats).
func (m Memory) WorkingSet() uint64 {
	if m.InactiveFile > m.Usage {
		return 0
	}
	return m.Usage - m.InactiveFile
}

// ParseMemoryStat parses memory.stat (v1 or v2) into a map; it is parse.KeyValues under its own name.
func ParseMemoryStat(r io.Reader, path string) (map[string]uint64, error) {
	return parse.KeyValues(r, path)
}

// statKey returns stat[key] or a parse.Error wrapping parse.ErrMissing.
func statKey(stat map[string]uint64, path, key string) (uint64, error) {
	v, ok := stat[key]
	if !ok {
		return 0, &parse.Error{Path: path, Value: key, Err: parse.ErrMissing}
	}
	return v, nil
}

// readFile reads path whole and parses it. It reads with plain open, read and close system calls:
// os.Open would register each cgroup file (pollable kernfs files) with the runtime's epoll and remove it
// again, which doubled the cost of one adaptive-poll sample (BenchmarkPollSample).
func readFile[T any](path string, p func(io.Reader, string) (T, error)) (T, error) {
	b, err := readAll(path)
	if err != nil {
		var zero T
		return zero, fmt.Errorf("cgroupfs: %w", err)
	}
	return p(bytes.NewReader(b), path)
}

// readAll returns the content of path; errors are *os.PathError, as os.Open's.
func readAll(path string) ([]byte, error) { return readAllInto(path, make([]byte, 0, 4096)) }

// readAllInto is readAll into buf (from its length on, grown when full), so that a caller reading many
// small files reuses one buffer.
func readAllInto(path string, buf []byte) ([]byte, error) {
	fd, err := openRead(path)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer unix.Close(fd)
	b, err := preadAll(fd, buf)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	return b, nil
}

// openRead opens path read-only, retrying on EINTR.
func openRead(path string) (int, error) {
	for {
		fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// limitOrNil turns a limit above Unlimited into nil.
func limitOrNil(v uint64) *uint64 {
	if v > Unlimited {
		return nil
	}
	return &v
}

// cgroupMemoryFiles names a non-root memory cgroup's files of one cgroup version: its usage, its limit (and
// how the limit reads) and the memory.stat key of its inactive file pages.
type cgroupMemoryFiles struct {
	usage, limit, inactiveFile string
	parseLimit                 func(io.Reader, string) (uint64, error)
}

var (
	cgroupMemoryFilesV1 = cgroupMemoryFiles{"memory.usage_in_bytes", "memory.limit_in_bytes", "total_inactive_file", parse.SingleUint}
	cgroupMemoryFilesV2 = cgroupMemoryFiles{"memory.current", "memory.max", "inactive_file", parse.SingleUintOrMax}
)

// readMemoryV1 reads a v1 memory cgroup directory.
func readMemoryV1(dir string) (Memory, error) { return readMemory(dir, cgroupMemoryFilesV1) }

// readMemoryV2 reads a non-root v2 memory cgroup directory.
func readMemoryV2(dir string) (Memory, error) { return readMemory(dir, cgroupMemoryFilesV2) }

// readMemory reads a non-root memory cgroup directory whose files are f.
func readMemory(dir string, f cgroupMemoryFiles) (Memory, error) {
	var m Memory
	var err error
	if m.Usage, err = readFile(filepath.Join(dir, f.usage), parse.SingleUint); err != nil {
		return Memory{}, err
	}
	lim, err := readFile(filepath.Join(dir, f.limit), f.parseLimit)
	if err != nil {
		return Memory{}, err
	}
	m.Limit = limitOrNil(lim)
	statPath := filepath.Join(dir, "memory.stat")
	stat, err := readFile(statPath, ParseMemoryStat)
	if err != nil {
		return Memory{}, err
	}
	if m.InactiveFile, err = statKey(stat, statPath, f.inactiveFile); err != nil {
		return Memory{}, err
	}
	m.Stat = stat
	return m, nil
}

// readRootV2 reads the v2 root, which has no memory.current: usage = anon + file of memory.stat.
func readRootV2(dir string) (Memory, error) {
	statPath := filepath.Join(dir, "memory.stat")
	stat, err := readFile(statPath, ParseMemoryStat)
	if err != nil {
		return Memory{}, err
	}
	var m Memory
	var anon, file uint64
	if anon, err = statKey(stat, statPath, "anon"); err != nil {
		return Memory{}, err
	}
	if file, err = statKey(stat, statPath, "file"); err != nil {
		return Memory{}, err
	}
	if m.InactiveFile, err = statKey(stat, statPath, "inactive_file"); err != nil {
		return Memory{}, err
	}
	m.Usage = anon + file
	m.Stat = stat
	return m, nil
}

// ReadMemory reads the memory cgroup rel (relative to l.Memory; "" or "/" is the root).
func (l Layout) ReadMemory(rel string) (Memory, error) {
	dir := filepath.Join(l.Memory, rel)
	switch {
	case l.Version == V1:
		return readMemoryV1(dir)
	case rel == "" || rel == "/" || rel == ".":
		return readRootV2(dir)
	default:
		return readMemoryV2(dir)
	}
}
