package reclaim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// reclaimV1 lowers memory.limit_in_bytes in chunk steps from the usage towards usage - bytes, never
// below floor, and restores the limit it found, whatever happens. A resize the kernel cannot satisfy
// by reclaim fails with EBUSY (it never OOM-kills): that stops the steps with partial set.
func reclaimV1(ctx context.Context, dir string, bytes, chunk, floor int64) (partial bool, err error) {
	path := filepath.Join(dir, "memory.limit_in_bytes")
	raw, err := os.ReadFile(path)
	if err != nil {
		return false, fmt.Errorf("read %s: %w", path, err)
	}
	old := strings.TrimSpace(string(raw))
	limit, err := parseBytes(raw)
	if err != nil {
		return false, fmt.Errorf("parse %s: %w", path, err)
	}
	usage, err := readFile(filepath.Join(dir, "memory.usage_in_bytes"), parseBytes)
	if err != nil {
		return false, fmt.Errorf("read usage: %w", err)
	}
	target := max(usage-bytes, floor)
	if target >= min(usage, limit) {
		return true, fmt.Errorf("%w: %s: usage %d - %d bytes is under the floor %d (rss + unevictable + margin)",
			ErrRefused, dir, usage, bytes, floor)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return false, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	defer func() {
		if rerr := restore(f, path, old); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}()
	for next := min(usage, limit) - chunk; ; next -= chunk {
		next = max(next, target)
		if err := expired(ctx); err != nil {
			return true, fmt.Errorf("lower %s: stopped at %d above target %d: %w", path, next, target, err)
		}
		if _, err := f.WriteString(strconv.FormatInt(next, 10)); err != nil {
			if errors.Is(err, syscall.EBUSY) {
				return true, nil
			}
			return true, fmt.Errorf("write %d to %s: %w", next, path, err)
		}
		if next == target {
			return false, nil
		}
	}
}

// restore writes the old limit back, retrying briefly: a cgroup left with a lowered limit is the one
// outcome this package must never produce.
func restore(f *os.File, path, old string) error {
	var err error
	for i := 0; i < 10; i++ {
		if _, err = f.WriteString(old); err == nil {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("restore %q to %s: %w", old, path, err)
}
