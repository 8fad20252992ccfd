package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// fileFlags are the flags of cache and thrash: the file, its size, and whether it is written with
// data (fsynced, so its page cache is clean) or made sparse (its holes read as zeros: page cache with
// no disk I/O).
type fileFlags struct {
	path   string
	size   quantity
	sparse bool
	hold   bool
	passes int
	random bool
	warm   quantity
}

func parseFile(name string, args []string, passes int) (fileFlags, error) {
	f := fileFlags{passes: passes}
	fs := newFlagSet(name)
	fs.StringVar(&f.path, "path", "", "file to create (parent directories are created)")
	fs.Var(&f.size, "size", "file size")
	fs.BoolVar(&f.sparse, "sparse", false, "make the file sparse instead of writing data")
	fs.BoolVar(&f.hold, "hold", true, "after the passes, hold until a signal instead of exiting 0")
	fs.IntVar(&f.passes, "passes", passes, "read passes over the file (0 = forever)")
	if name == "thrash" {
		fs.BoolVar(&f.random, "random", false, "touch pages picked at random (seeded) instead of in order")
		fs.Var(&f.warm, "warm", "before the thrash, read the file's last QTY twice (its page cache becomes active)")
	}
	if err := parse(fs, args); err != nil {
		return f, err
	}
	if f.path == "" || f.size <= 0 {
		return f, fmt.Errorf("%w: --path and a positive --size are required", errUsage)
	}
	return f, nil
}

// syncEvery is how often create fsyncs: little of the file is ever dirty (dirty cache is not reclaimable).
const syncEvery = 64 << 20

// create makes the file: sparse, or written in 4Mi steps and fsynced every syncEvery bytes.
func (f fileFlags) create(lg *logger) error {
	if err := os.MkdirAll(filepath.Dir(f.path), 0o755); err != nil {
		return fmt.Errorf("create parent of %s: %w", f.path, err)
	}
	out, err := os.OpenFile(f.path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", f.path, err)
	}
	defer out.Close()
	if f.sparse {
		if err := out.Truncate(int64(f.size)); err != nil {
			return fmt.Errorf("truncate %s: %w", f.path, err)
		}
	} else {
		buf := make([]byte, defaultStep)
		for i := range buf {
			buf[i] = byte(i%251) + 1
		}
		for done := int64(0); done < int64(f.size); {
			n := nextChunk(done, defaultStep, int64(f.size))
			if _, err := out.Write(buf[:n]); err != nil {
				return fmt.Errorf("write %s: %w", f.path, err)
			}
			done += n
			if done%syncEvery == 0 || done == int64(f.size) {
				if err := out.Sync(); err != nil {
					return fmt.Errorf("fsync %s: %w", f.path, err)
				}
			}
		}
	}
	lg.log(entry{Event: "created", Path: f.path, Bytes: ptr(int64(f.size))})
	return nil
}

// runCache creates the file and reads it --passes times (default 2: its page cache becomes active),
// logging {"event":"pass","count":N,"bytes":B,"rate":bytes/s} per pass, then holds.
func runCache(lg *logger, args []string, _ func(func())) error {
	f, err := parseFile("cache", args, 2)
	if err != nil {
		return err
	}
	if err := f.create(lg); err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	for pass := 1; f.passes == 0 || pass <= f.passes; pass++ {
		start := time.Now()
		in, err := os.Open(f.path)
		if err != nil {
			return fmt.Errorf("open %s: %w", f.path, err)
		}
		n, err := io.CopyBuffer(io.Discard, onlyReader{in}, buf)
		in.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", f.path, err)
		}
		lg.log(entry{Event: "pass", Count: ptr(pass), Bytes: ptr(n), Rate: ptr(rateOf(n, time.Since(start)))})
	}
	if f.hold {
		hold(lg)
	}
	return nil
}

// runThrash creates the file, maps it shared and read-only, and reads the first byte of every page of it
// in a loop (--passes, default 0: forever), logging {"event":"pass","count":N,"bytes":B,"rate":bytes/s,
// "sum":S} per pass: a file-backed working set as large as the file. S, the sum of the bytes read, is
// logged so that the reads are used: a loop whose loads are dead is compiled without them and touches
// no page at all (what the first version of this mode did).
//
// With --random a pass reads as many pages, each picked at random (a seeded generator, so two runs read
// the same sequence) and the mapping is advised MADV_RANDOM (no read-around): a page stays resident for a
// while and is read again at a random distance, so some refaults are near enough for the kernel to
// activate them, unlike the loop's, which are all as far apart as the file is large.
func runThrash(lg *logger, args []string, _ func(func())) error {
	f, err := parseFile("thrash", args, 0)
	if err != nil {
		return err
	}
	if err := f.create(lg); err != nil {
		return err
	}
	if err := f.warmUp(lg); err != nil {
		return err
	}
	b, unmap, err := f.mapFile()
	if err != nil {
		return err
	}
	defer unmap()
	touch := func() int64 { return touchPages(b, os.Getpagesize()) }
	if f.random {
		rng := rand.New(rand.NewPCG(1, 2))
		touch = func() int64 { return touchRandom(b, os.Getpagesize(), rng) }
	}
	for pass := 1; f.passes == 0 || pass <= f.passes; pass++ {
		start := time.Now()
		sum := touch()
		lg.log(entry{Event: "pass", Count: ptr(pass), Bytes: ptr(int64(len(b))),
			Rate: ptr(rateOf(int64(len(b)), time.Since(start))), Sum: ptr(sum)})
	}
	if f.hold {
		hold(lg)
	}
	return nil
}

// warmUp reads the file's last --warm bytes twice with read(2), logging {"event":"warm","count":N,...}
// per pass: the second read of a page activates it, so the thrash starts with that much active cache (the
// kernel activates a refault only when its distance is within the active list: an empty one activates
// nothing, and the working set would take minutes to build at disk speed). The end of the file is what
// writing it left resident: reading the start back would refault it, page after page, and those
// refaults are not the thrash's.
func (f fileFlags) warmUp(lg *logger) error {
	if f.warm <= 0 {
		return nil
	}
	n := min(int64(f.warm), int64(f.size))
	for pass := 1; pass <= 2; pass++ {
		start := time.Now()
		if err := readRange(f.path, int64(f.size)-n, n); err != nil {
			return err
		}
		lg.log(entry{Event: "warm", Count: ptr(pass), Bytes: ptr(n), Rate: ptr(rateOf(n, time.Since(start)))})
	}
	return nil
}

// readRange reads n bytes of the file at path from off, through a 1Mi buffer.
func readRange(path string, off, n int64) error {
	in, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer in.Close()
	buf := make([]byte, 1<<20)
	if _, err := io.CopyBuffer(io.Discard, onlyReader{io.NewSectionReader(in, off, n)}, buf); err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	return nil
}

// mapFile maps the file shared and read-only (advised MADV_RANDOM with --random) and returns the mapping
// and how to unmap it.
func (f fileFlags) mapFile() ([]byte, func(), error) {
	in, err := os.Open(f.path)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", f.path, err)
	}
	defer in.Close() // the mapping keeps the file
	b, err := syscall.Mmap(int(in.Fd()), 0, int(f.size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("mmap %s: %w", f.path, err)
	}
	if f.random {
		if err := syscall.Madvise(b, syscall.MADV_RANDOM); err != nil {
			_ = syscall.Munmap(b)
			return nil, nil, fmt.Errorf("madvise %s: %w", f.path, err)
		}
	}
	return b, func() { _ = syscall.Munmap(b) }, nil
}

// touchPages reads the first byte of every page of b and returns their sum.
func touchPages(b []byte, page int) int64 {
	var sum int64
	for i := 0; i < len(b); i += page {
		sum += int64(b[i])
	}
	return sum
}

// touchRandom reads the first byte of len(b)/page pages of b picked at random and returns their sum.
func touchRandom(b []byte, page int, rng *rand.Rand) int64 {
	pages := len(b) / page
	var sum int64
	for range pages {
		sum += int64(b[rng.IntN(pages)*page])
	}
	return sum
}

// onlyReader hides the file's WriterTo/ReaderFrom so io.CopyBuffer really reads through buf (no
// sendfile or splice that could bypass the page cache accounting of the reader).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func rateOf(n int64, d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	return int64(float64(n) / d.Seconds())
}
