package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"time"

	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// markCost prefixes the cost sampler's lines (test/vm parses them: keep in sync).
const markCost = "=== pressure-vm cost "

// costComms are the processes the cost sampler reports: the node's agents and the node components the
// agent's cost is compared with. The kernel keeps 15 bytes of a name: pressure-janitor is "pressure-janito".
var costComms = map[string]bool{"kubelet": true, "containerd": true, "pressure-agent": true, "pressure-janito": true}

// costWatch (as `/init cost <period>`) prints, every period, one line per process of costComms:
// "<markCost><unix nanoseconds> <comm> <pid> <utime+stime clock ticks> <VmRSS kB> <VmHWM kB>". The
// benchmark takes a window's CPU from the difference of two lines of the same process.
func costWatch(period time.Duration) {
	proc := procfs.NewReader("")
	for tick := time.NewTicker(period); ; <-tick.C {
		now := time.Now().UnixNano()
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			pid, err := strconv.Atoi(filepath.Base(d))
			if err != nil {
				continue
			}
			st, err := proc.ProcessStat(pid)
			if err != nil || !costComms[st.Comm] {
				continue // gone, or not one of ours
			}
			m, err := proc.ProcessMemory(pid)
			if err != nil {
				continue
			}
			fmt.Printf("%s%d %s %d %d %d %d\n", markCost, now, st.Comm, pid, st.UTime+st.STime, m.RSS>>10, m.HWM>>10)
		}
	}
}
