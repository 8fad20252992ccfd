package reclaim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Version is the cgroup version of a target dir.
type Version int

const (
	// V1 is a cgroup v1 memory controller dir (memory.limit_in_bytes).
	V1 Version = 1
	// V2 is a cgroup v2 dir with the memory controller (memory.reclaim).
	V2 Version = 2
)

// Defaults of the zero Reclaimer's bounds.
const (
	DefaultMaxBytes     = 2 << 30
	DefaultChunk        = 64 << 20
	DefaultChunkV2      = 16 << 20
	DefaultTimeout      = 2 * time.Second
	DefaultMinInterval  = 10 * time.Second
	DefaultMargin       = 64 << 20
	DefaultMaxSomeAvg10 = 10.0
)

// ErrRefused wraps every reason a call did nothing on purpose (bounds, thrashing, rate).
var ErrRefused = errors.New("reclaim refused")

// Reclaimer reclaims memory from cgroups below Root. The zero value of every bound means its default.
// It is safe for concurrent use.
type Reclaimer struct {
	// Root is the cgroup dir under which targets must lie, e.g. /sys/fs/cgroup/memory/kubepods.
	Root string
	// MaxBytes caps one call's request.
	MaxBytes int64
	// Chunk is the bytes of one kernel write (a v1 limit step, a v2 memory.reclaim write); the context is
	// checked between chunks. Zero means DefaultChunk on v1 and DefaultChunkV2 on v2: a memory.reclaim
	// write runs its reclaim to the end (16 MiB of page cache took about 0.1 s in the TCG guest, 64 MiB
	// about 1.4 s) and the kernel overshoots it by a part of its size.
	Chunk int64
	// Timeout caps one call (the restore on v1 runs after it).
	Timeout time.Duration
	// MinInterval is the least time between two calls on the same cgroup.
	MinInterval time.Duration
	// Margin is the room above rss + unevictable that v1 never lowers the limit into.
	Margin int64
	// MaxSomeAvg10 refuses a v2 cgroup whose memory.pressure "some" avg10 is at or above it.
	MaxSomeAvg10 float64
	// Thrashing, when set, is asked before reclaiming; true refuses (e.g. from the agent's refault rate).
	Thrashing func(dir string) bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu   sync.Mutex
	last map[string]time.Time
}

// Result is the outcome of one call.
type Result struct {
	// Requested is the bytes asked of the kernel after the MaxBytes cap.
	Requested int64
	// Freed is usage before minus usage after (never negative).
	Freed int64
	// FileFreed is the page cache before minus after (never negative).
	FileFreed int64
	// Before and After are the cgroup's usage around the reclaim.
	Before, After Usage
	// Took is the wall time of the reclaim, the v1 restore included.
	Took time.Duration
	// Partial is true when the kernel could not reclaim all that was asked (EAGAIN, EBUSY, timeout).
	Partial bool
	// Err is why nothing or only part was done; errors.Is(Err, ErrRefused) for refusals.
	Err error
}

func or[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func (r *Reclaimer) clock() func() time.Time {
	if r.Now == nil {
		return time.Now
	}
	return r.Now
}

// Detect returns the cgroup version of dir from its control files.
func Detect(dir string) (Version, error) {
	if _, err := os.Stat(filepath.Join(dir, "memory.limit_in_bytes")); err == nil {
		return V1, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "memory.current")); err == nil {
		return V2, nil
	}
	return 0, fmt.Errorf("cgroup %s: neither memory.limit_in_bytes (v1) nor memory.current (v2)", dir)
}

// Reclaim asks the kernel to reclaim up to bytes from the cgroup dir and measures what it freed.
func (r *Reclaimer) Reclaim(ctx context.Context, dir string, bytes int64) Result {
	now := r.clock()
	start := now()
	res := r.reclaim(ctx, dir, bytes)
	res.Took = now().Sub(start)
	return res
}

func (r *Reclaimer) reclaim(ctx context.Context, dir string, bytes int64) Result {
	dir = filepath.Clean(dir)
	if err := r.check(dir, bytes); err != nil {
		return Result{Err: err}
	}
	v, err := Detect(dir)
	if err != nil {
		return Result{Err: err}
	}
	res := Result{Requested: min(bytes, or(r.MaxBytes, DefaultMaxBytes))}
	if res.Before, err = ReadUsage(dir, v); err != nil {
		res.Err = err
		return res
	}
	if err := r.thrashing(dir, v); err != nil {
		res.Err = err
		return res
	}
	if err := r.rate(dir); err != nil {
		res.Err = err
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, or(r.Timeout, DefaultTimeout))
	defer cancel()
	if v == V2 {
		res.Partial, res.Err = reclaimV2(ctx, dir, res.Requested, or(r.Chunk, DefaultChunkV2), currentOf(dir))
	} else {
		res.Partial, res.Err = reclaimV1(ctx, dir, res.Requested, or(r.Chunk, DefaultChunk), res.Before.Anon+res.Before.Unevictable+or(r.Margin, DefaultMargin))
	}
	after, err := ReadUsage(dir, v)
	if err != nil {
		res.Err = errors.Join(res.Err, err)
		return res
	}
	res.After = after
	res.Freed = max(0, res.Before.Usage-after.Usage)
	res.FileFreed = max(0, res.Before.File-after.File)
	return res
}

func (r *Reclaimer) check(dir string, bytes int64) error {
	if r.Root == "" {
		return fmt.Errorf("%w: reclaimer has no root", ErrRefused)
	}
	root := filepath.Clean(r.Root)
	if dir != root && !strings.HasPrefix(dir, root+string(filepath.Separator)) {
		return fmt.Errorf("%w: cgroup %s is not under root %s", ErrRefused, dir, root)
	}
	if bytes <= 0 {
		return fmt.Errorf("%w: bytes %d: want > 0", ErrRefused, bytes)
	}
	return nil
}

func (r *Reclaimer) thrashing(dir string, v Version) error {
	if v == V2 {
		p := filepath.Join(dir, "memory.pressure")
		if b, err := os.ReadFile(p); err == nil {
			avg, err := parseSomeAvg10(b)
			if err != nil {
				return fmt.Errorf("parse %s: %w", p, err)
			}
			if lim := or(r.MaxSomeAvg10, DefaultMaxSomeAvg10); avg >= lim {
				return fmt.Errorf("%w: %s some avg10=%.2f >= %.2f: the cgroup thrashes", ErrRefused, p, avg, lim)
			}
		}
	}
	if r.Thrashing != nil && r.Thrashing(dir) {
		return fmt.Errorf("%w: cgroup %s thrashes (caller's refault signal)", ErrRefused, dir)
	}
	return nil
}

// rate records the call and refuses one within MinInterval of the last on dir.
func (r *Reclaimer) rate(dir string) error {
	now := r.clock()()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil {
		r.last = make(map[string]time.Time)
	}
	iv := or(r.MinInterval, DefaultMinInterval)
	if t, ok := r.last[dir]; ok && now.Sub(t) < iv {
		return fmt.Errorf("%w: cgroup %s reclaimed %s ago, min interval %s", ErrRefused, dir, now.Sub(t), iv)
	}
	r.last[dir] = now
	return nil
}

// expired is ctx's error, or context.DeadlineExceeded once ctx's deadline has passed: the deadline's
// timer cancels ctx from another goroutine, which a loaded machine may not run for milliseconds while
// the steps go on (a 1 ms timeout let 200 MiB of 256 KiB steps finish in 10 ms under -race).
func expired(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}
