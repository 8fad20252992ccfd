// Command detection measures how long each wake-up mechanism of internal/notify takes to notice that a
// real process in a real cgroup v1 memory cgroup pushed usage across a threshold, and what each costs in
// CPU while idle. Run it as root through run.sh; it prints a markdown report. With -guest it builds
// itself statically and runs in the cgroup v2 guest of test/vm (-cgroup2-root): memory.events with
// memory.high at the threshold, the cgroup's PSI trigger with a 500 ms window, and the polls on
// memory.current replace the v1 memcg threshold.
//
// For every ramp rate, a hog process (internal/source/cgroupfs/cgrouptest) touches anonymous memory at
// that rate in 256 KiB steps and logs a CLOCK_MONOTONIC timestamp per step. The crossing time is
// interpolated from that log; each mechanism's latency is its first wake-up at or after the crossing
// (and before the hog frees the memory again). All mechanisms run at the same time, on the same
// crossings.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

const mib = 1 << 20

type config struct {
	rates        []int64 // MiB/s
	crossings    int
	baseline     int // crossings measured for the 10 s periodic poll
	offset, ramp int64
	chunk        int64
	hold, settle time.Duration
	idle         time.Duration
	seed         uint64
	// cgroup2 is the root of a cgroup2 hierarchy with the memory controller (the test/vm guest's); ""
	// means the host's cgroup v1 memory controller.
	cgroup2 string
	over    int64 // v2: bytes each ramp goes past the threshold (memory.high throttles beyond it)
}

func main() {
	cgrouptest.RunHogIfRequested()
	var cfg config
	rates := flag.String("rates", "64,256,1024", "ramp rates in MiB/s")
	flag.IntVar(&cfg.crossings, "crossings", 20, "upward crossings per rate")
	flag.IntVar(&cfg.baseline, "baseline-crossings", 10, "crossings measured for the 10s periodic poll (random phase, held until it fires)")
	flag.Int64Var(&cfg.offset, "offset-mib", 64, "threshold = cgroup usage before the first ramp + this many MiB")
	flag.Int64Var(&cfg.ramp, "ramp-mib", 128, "MiB allocated per ramp")
	flag.Int64Var(&cfg.chunk, "chunk-kib", 256, "KiB touched per ramp step")
	flag.DurationVar(&cfg.hold, "hold", 400*time.Millisecond, "time memory is held above the threshold")
	flag.DurationVar(&cfg.settle, "settle", 400*time.Millisecond, "time after freeing before the next ramp")
	flag.DurationVar(&cfg.idle, "idle", 20*time.Second, "idle period per mechanism for the CPU measurement")
	flag.Uint64Var(&cfg.seed, "seed", 1, "seed of the random phase before each 10s-poll crossing")
	flag.StringVar(&cfg.cgroup2, "cgroup2-root", "", "measure the cgroup v2 mechanisms below this cgroup2 root (set by -guest)")
	flag.Int64Var(&cfg.over, "over-kib", 1024, "cgroup v2: KiB each ramp allocates past the threshold (-ramp-mib is ignored)")
	guest := flag.Bool("guest", false, "boot the cgroup v2 guest of test/vm and run there with -cgroup2-root (from the repository root)")
	guestNice := flag.Int("guest-nice", 15, "with -guest: nice level of the build and of qemu (0: not niced, for a measurement run)")
	flag.Parse()
	if *guest {
		if err := runInGuest(guestArgs(os.Args[1:]), *guestNice); err != nil {
			fmt.Fprintln(os.Stderr, "detection:", err)
			os.Exit(1)
		}
		return
	}
	for _, r := range strings.Split(*rates, ",") {
		v, err := strconv.ParseInt(strings.TrimSpace(r), 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "bad -rates %q: %v\n", *rates, err)
			os.Exit(2)
		}
		cfg.rates = append(cfg.rates, v)
	}
	cfg.offset *= mib
	cfg.ramp *= mib
	cfg.chunk *= 1024
	cfg.over *= 1024
	if cfg.cgroup2 != "" {
		cfg.ramp = cfg.offset + cfg.over
	}
	if err := run(cfg); err != nil {
		fmt.Fprintln(os.Stderr, "detection:", err)
		os.Exit(1)
	}
}

func run(cfg config) error {
	dir, err := benchCgroup(cfg)
	if err != nil {
		return err
	}
	defer cgrouptest.Remove(dir)
	hog, err := cgrouptest.StartHog(dir)
	if err != nil {
		return err
	}
	defer hog.Close()
	base, err := cgrouptest.ReadUint(filepath.Join(dir, cfg.usageFile()))
	if err != nil {
		return err
	}
	threshold := int64(base) + cfg.offset
	if cfg.cgroup2 != "" { // the tripwire memory.events reports
		if err := cgrouptest.WriteFile(filepath.Join(dir, "memory.high"), strconv.FormatInt(threshold, 10)); err != nil {
			return err
		}
	}
	start := time.Now()
	lat, notes, err := measureLatency(cfg, dir, hog, threshold)
	if err != nil {
		return err
	}
	cpu, err := measureCPU(cfg, dir, threshold)
	if err != nil {
		return err
	}
	report(os.Stdout, cfg, lat, cpu, notes, time.Since(start))
	return nil
}

// benchCgroup creates the benchmark's cgroup (memory limit 2 GiB) on cgroup v1 or below cfg.cgroup2.
func benchCgroup(cfg config) (string, error) {
	name := cgrouptest.RandomName("pressure-bench")
	if cfg.cgroup2 != "" {
		return filepath.Join(cfg.cgroup2, name), cgrouptest.MkdirV2(cfg.cgroup2, name, 2<<30)
	}
	if why := cgrouptest.Available(); why != "" {
		return "", fmt.Errorf("cannot run: %s", why)
	}
	dir := filepath.Join(cgrouptest.V1Memory, name)
	return dir, cgrouptest.Mkdir(dir, 2<<30)
}

// ctxFor returns a context cancelled by the returned func.
func ctxFor() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }
