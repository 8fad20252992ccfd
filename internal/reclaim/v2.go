package reclaim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// reclaimV2 writes bytes to memory.reclaim in chunks, checking ctx between chunks. EAGAIN (the kernel
// could not reclaim the whole chunk) stops it with partial set and no error.
func reclaimV2(ctx context.Context, dir string, bytes, chunk int64) (partial bool, err error) {
	path := filepath.Join(dir, "memory.reclaim")
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return false, fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	for left := bytes; left > 0; {
		if err := ctx.Err(); err != nil {
			return true, fmt.Errorf("write %s: stopped with %d of %d bytes left: %w", path, left, bytes, err)
		}
		n := min(chunk, left)
		if _, err := f.WriteString(strconv.FormatInt(n, 10)); err != nil {
			if errors.Is(err, syscall.EAGAIN) {
				return true, nil
			}
			return true, fmt.Errorf("write %q to %s: %w", strconv.FormatInt(n, 10), path, err)
		}
		left -= n
	}
	return false, nil
}
