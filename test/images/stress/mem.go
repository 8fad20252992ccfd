package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

// rampFlags are the flags shared by mem and disk.
type rampFlags struct {
	rate, target, step quantity
	hold               bool
}

// parseRamp parses the ramp flags plus whatever extra registers on the same flag set.
func parseRamp(name string, args []string, extra func(fs *flag.FlagSet)) (rampFlags, error) {
	r := rampFlags{step: defaultStep}
	fs := newFlagSet(name)
	fs.Var(&r.rate, "rate", "bytes per second (0 = unpaced)")
	fs.Var(&r.target, "target", "stop at this many bytes (0 = never stop)")
	fs.Var(&r.step, "step", "bytes per step; one log line per step")
	fs.BoolVar(&r.hold, "hold", true, "after reaching target, hold until a signal instead of exiting 0")
	if extra != nil {
		extra(fs)
	}
	if err := parse(fs, args); err != nil {
		return r, err
	}
	if r.step <= 0 {
		return r, fmt.Errorf("%w: --step must be positive, got %d", errUsage, r.step)
	}
	return r, nil
}

// start logs the ramp parameters and starts the clock.
func (r *rampFlags) start(lg *logger) pacer {
	lg.log(entry{Event: "ramp", Rate: ptr(int64(r.rate)), Target: ptr(int64(r.target)), Step: ptr(int64(r.step))})
	return pacer{start: time.Now(), rate: int64(r.rate)}
}

// runMem maps anonymous memory step by step, writing every page so it is resident and charged
// to the cgroup, logs {"event":"alloc","bytes":total} per step, then holds it.
func runMem(lg *logger, args []string, _ func(func())) error {
	r, err := parseRamp("mem", args, nil)
	if err != nil {
		return err
	}
	p := r.start(lg)
	page := os.Getpagesize()
	var chunks [][]byte // kept reachable so the mappings are never unmapped
	var done int64
	for r.target == 0 || done < int64(r.target) {
		n := nextChunk(done, int64(r.step), int64(r.target))
		p.wait(done + n)
		b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
		if err != nil {
			return fmt.Errorf("mmap %d bytes after %d allocated: %w", n, done, err)
		}
		for i := 0; i < len(b); i += page {
			b[i] = 1
		}
		chunks = append(chunks, b)
		done += n
		lg.log(entry{Event: "alloc", Bytes: ptr(done)})
	}
	lg.log(entry{Event: "target", Bytes: ptr(done)})
	if r.hold {
		hold(lg)
	}
	_ = chunks
	return nil
}
