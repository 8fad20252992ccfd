package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

// markAvail prefixes the available-memory watcher's lines (test/vm parses them: keep in sync).
const markAvail = "=== pressure-vm avail "

// availPeriod is how often availWatch reads the pods cgroup.
const availPeriod = 10 * time.Millisecond

// availWatch (as `/init avail <cgroup dir> <band MiB>`) reads the cgroup's memory.max, memory.current
// and memory.stat every availPeriod and, while max − working set (current − inactive_file, the
// kubelet's allocatableMemory.available on cgroup v2) is below the band, prints it with the time:
// "<markAvail><unix nanoseconds> <available bytes>", when it moved by a MiB or more since the last
// line, or a second passed, and once more on leaving the band. Benchmarks find the crossing of the agent's threshold in these lines, on
// the clock of the agent's own log. It runs until the guest stops; a cgroup not there yet is waited for.
func availWatch(dir string, bandMiB int64) {
	band := bandMiB << 20
	var last int64 = -1
	var lastAt time.Time
	for tick := time.NewTicker(availPeriod); ; <-tick.C {
		avail, ok := available(dir, band)
		now := time.Now()
		if !ok || avail >= band {
			if ok && last >= 0 { // one line on leaving the band: the samples' reader sees the rise
				fmt.Printf("%s%d %d\n", markAvail, now.UnixNano(), avail)
			}
			last = -1
			continue
		}
		if last >= 0 && abs(avail-last) < 1<<20 && now.Sub(lastAt) < time.Second {
			continue
		}
		fmt.Printf("%s%d %d\n", markAvail, now.UnixNano(), avail)
		last, lastAt = avail, now
	}
}

// available is memory.max − (memory.current − inactive_file) of dir; false when a file is missing,
// unreadable or the limit is "max". While max − current is at or above band, so is the available
// memory (the working set is at most current): it returns max − current without reading memory.stat,
// whose read flushes the kernel's per-CPU statistics and, every 10 ms on the guest's emulated CPUs,
// slowed the stress pod's ramp.
func available(dir string, band int64) (int64, bool) {
	limit, ok := readInt(filepath.Join(dir, "memory.max"))
	if !ok {
		return 0, false
	}
	current, ok := readInt(filepath.Join(dir, "memory.current"))
	if !ok {
		return 0, false
	}
	if limit-current >= band {
		return limit - current, true
	}
	stat, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return 0, false
	}
	inactive, ok := statValue(stat, "inactive_file")
	if !ok {
		return 0, false
	}
	return limit - max(current-inactive, 0), true
}

// readInt is the single value of path ("max" makes it false: no limit), by the agent's own parser.
func readInt(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	v, err := parse.SingleUintOrMaxBytes(b, path)
	return int64(v), err == nil && v <= math.MaxInt64
}

// statValue is key's value in a memory.stat file, by the agent's own parser.
func statValue(stat []byte, key string) (int64, bool) {
	var v [1]uint64
	found, err := parse.PickKeyValues(stat, "memory.stat", []string{key}, v[:])
	return int64(v[0]), err == nil && found == 1 && v[0] <= math.MaxInt64
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
