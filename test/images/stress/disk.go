package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// runDisk writes a file step by step (each step fsynced), logs {"event":"write","bytes":total}
// per step, then holds. A write error (ENOSPC) is logged and the file is held as far as it got.
func runDisk(lg *logger, args []string, _ func(func())) error {
	path := ""
	r, err := parseRamp("disk", args, func(fs *flag.FlagSet) {
		fs.StringVar(&path, "path", "", "file to write (parent directories are created)")
	})
	if err != nil {
		return err
	}
	if path == "" {
		return fmt.Errorf("%w: --path is required", errUsage)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create parent of %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("open %s: %w", path, err)
	}
	defer f.Close()
	buf := make([]byte, int(r.step))
	for i := range buf {
		buf[i] = byte(i%251) + 1 // not zeros: nothing may store it sparsely
	}
	p := r.start(lg)
	var done int64
	for r.target == 0 || done < int64(r.target) {
		n := nextChunk(done, int64(r.step), int64(r.target))
		p.wait(done + n)
		if err := writeStep(f, buf[:n]); err != nil {
			lg.log(entry{Event: "error", Path: path, Bytes: ptr(done), Error: err.Error()})
			hold(lg)
		}
		done += n
		lg.log(entry{Event: "write", Path: path, Bytes: ptr(done)})
	}
	lg.log(entry{Event: "target", Path: path, Bytes: ptr(done)})
	if r.hold {
		hold(lg)
	}
	return nil
}

func writeStep(f *os.File, b []byte) error {
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	return nil
}

// runFiles creates count empty files in dir, rate per second (0: unpaced), logs
// {"event":"files","count":i} every 1000 files and {"event":"target","count":N}, then holds. Each file
// takes an inode and no block: inode exhaustion without filling the disk. A create error (ENOSPC: no
// inode left) is logged and the files are held as far as it got.
func runFiles(lg *logger, args []string, _ func(func())) error {
	fs := newFlagSet("files")
	dir := fs.String("path", "", "directory to create the files in (created)")
	count := fs.Int("count", 0, "number of files")
	rate := fs.Int("rate", 0, "files per second (0 = unpaced)")
	holdFlag := fs.Bool("hold", true, "after creating the files, hold until a signal instead of exiting 0")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *dir == "" || *count < 0 || *rate < 0 {
		return fmt.Errorf("%w: --path is required, --count and --rate must not be negative", errUsage)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", *dir, err)
	}
	start := time.Now()
	for i := 1; i <= *count; i++ {
		if *rate > 0 {
			if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(*rate))); d > 0 {
				time.Sleep(d)
			}
		}
		f, err := os.Create(filepath.Join(*dir, fmt.Sprintf("f%07d", i)))
		if err != nil {
			lg.log(entry{Event: "error", Path: *dir, Count: ptr(i - 1), Error: err.Error()})
			hold(lg)
		}
		_ = f.Close()
		if i%1000 == 0 {
			lg.log(entry{Event: "files", Path: *dir, Count: ptr(i)})
		}
	}
	lg.log(entry{Event: "target", Count: ptr(*count)})
	if *holdFlag {
		hold(lg)
	}
	return nil
}
