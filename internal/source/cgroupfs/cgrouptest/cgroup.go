package cgrouptest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// V1Memory is the cgroup v1 memory controller mount point on this kind of host.
const V1Memory = "/sys/fs/cgroup/memory"

// Available reports why real cgroup v1 memory tests cannot run here, or "" when they can.
func Available() string {
	if os.Geteuid() != 0 {
		return "not root"
	}
	if _, err := os.Stat(filepath.Join(V1Memory, "cgroup.event_control")); err != nil {
		return fmt.Sprintf("no cgroup v1 memory controller: %v", err)
	}
	return ""
}

// RandomName returns prefix-<8 hex digits>.
func RandomName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// Mkdir creates the cgroup dir (and parents) and, when limit > 0, sets memory.limit_in_bytes.
func Mkdir(dir string, limit int64) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if limit > 0 {
		return WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), strconv.FormatInt(limit, 10))
	}
	return nil
}

// WriteFile writes s to a cgroup control file.
func WriteFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return fmt.Errorf("write %q to %s: %w", s, path, err)
	}
	return f.Close()
}

// Remove removes the cgroup dir and every cgroup below it, deepest first. It retries for a short while
// because a just-killed process may still be leaving the cgroup.
func Remove(dir string) error {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return strings.Count(dirs[i], "/") > strings.Count(dirs[j], "/") })
	for _, d := range dirs {
		var err error
		for i := 0; i < 50; i++ {
			if err = os.Remove(d); err == nil || os.IsNotExist(err) {
				err = nil
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// ReadUint reads a single-number cgroup file.
func ReadUint(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
}
