package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
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
	for tick := time.NewTicker(period); ; <-tick.C {
		now := time.Now().UnixNano()
		dirs, _ := filepath.Glob("/proc/[0-9]*")
		for _, d := range dirs {
			comm, ticks, ok := procStat(d)
			if !ok || !costComms[comm] {
				continue
			}
			rss, hwm := procStatus(d)
			fmt.Printf("%s%d %s %s %d %d %d\n", markCost, now, comm, filepath.Base(d), ticks, rss, hwm)
		}
	}
}

// procStat reads the process's name and its utime+stime from /proc/PID/stat (fields 14 and 15, after
// the parenthesized name, which may hold spaces).
func procStat(dir string) (string, int64, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return "", 0, false
	}
	s := string(b)
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open {
		return "", 0, false
	}
	f := strings.Fields(s[closing+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return "", 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return s[open+1 : closing], utime + stime, true
}

// procStatus reads VmRSS and VmHWM (kB) from /proc/PID/status; 0 when absent.
func procStatus(dir string) (rss, hwm int64) {
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		switch k {
		case "VmRSS":
			rss = n
		case "VmHWM":
			hwm = n
		}
	}
	return rss, hwm
}
