package vm

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// markCost prefixes the guest's cost sampler lines (guestinit/cost.go: keep in sync).
const markCost = "=== pressure-vm cost "

// clockTicks is the kernel's USER_HZ: /proc/PID/stat counts CPU time in 1/100 s.
const clockTicks = 100

// CostSample is one cost sampler line: a process's CPU time so far and its memory, at a guest time.
type CostSample struct {
	At       time.Time
	Comm     string // the kernel's 15-byte name: "pressure-janito" for the janitor
	PID      int
	Ticks    int64 // utime+stime, 1/100 s
	RSS, HWM int64 // kB
}

func parseCost(line string) (CostSample, bool) {
	f := strings.Fields(strings.TrimPrefix(line, markCost))
	if len(f) != 6 {
		return CostSample{}, false
	}
	var v [5]int64
	for i, j := range []int{0, 2, 3, 4, 5} {
		n, err := strconv.ParseInt(f[j], 10, 64)
		if err != nil {
			return CostSample{}, false
		}
		v[i] = n
	}
	return CostSample{At: time.Unix(0, v[0]), Comm: f[1], PID: int(v[1]), Ticks: v[2], RSS: v[3], HWM: v[4]}, true
}

// Cost is the cost sampler's lines so far (NodeOptions.CostEvery), in the order printed.
func (n *Node) Cost() []CostSample { return parsed(n.Guest.OutputLines(markCost), parseCost) }

// parsed is what parse accepts of lines, in order (the guest's serial output may hold a torn line).
func parsed[T any](lines []string, parse func(string) (T, bool)) []T {
	var out []T
	for _, l := range lines {
		if v, ok := parse(l); ok {
			out = append(out, v)
		}
	}
	return out
}

// Usage is what the processes of one name used over a window: CPU as a share of one core, and the sum
// over them of RSS, averaged over the window's samples and at its largest, and of VmHWM at its end.
type Usage struct {
	Comm               string
	Processes          int
	Window             time.Duration
	CorePercent        float64
	RSSAvgKB, RSSMaxKB int64
	HWMKB              int64
}

func (u Usage) String() string {
	return fmt.Sprintf("%s (%d processes): %.2f %% of a core over %s, RSS avg %.1f MiB, max %.1f MiB, VmHWM %.1f MiB",
		u.Comm, u.Processes, u.CorePercent, u.Window.Round(time.Second), float64(u.RSSAvgKB)/1024, float64(u.RSSMaxKB)/1024, float64(u.HWMKB)/1024)
}

// UsageOver is, for each process name, its Usage between the first sample at or after from and the
// last at or before to; a process must be in both to count (one that started or ended inside the
// window is left out: its CPU would be partial). Names in order.
func UsageOver(samples []CostSample, from, to time.Time) []Usage {
	type span struct{ first, last CostSample }
	spans := map[int]*span{}
	rss := map[string]map[time.Time]int64{} // comm → sample time → summed RSS
	for _, s := range samples {
		if s.At.Before(from) || s.At.After(to) {
			continue
		}
		if sp, ok := spans[s.PID]; ok {
			sp.last = s
		} else {
			spans[s.PID] = &span{first: s, last: s}
		}
		if rss[s.Comm] == nil {
			rss[s.Comm] = map[time.Time]int64{}
		}
		rss[s.Comm][s.At] += s.RSS
	}
	byComm := map[string]*Usage{}
	for _, sp := range spans {
		w := sp.last.At.Sub(sp.first.At)
		if w <= 0 {
			continue
		}
		u := byComm[sp.first.Comm]
		if u == nil {
			u = &Usage{Comm: sp.first.Comm}
			byComm[sp.first.Comm] = u
		}
		u.Processes++
		u.Window = max(u.Window, w)
		u.CorePercent += 100 * float64(sp.last.Ticks-sp.first.Ticks) / clockTicks / w.Seconds()
		u.HWMKB += sp.last.HWM
	}
	var out []Usage
	for comm, u := range byComm {
		var sum int64
		for _, v := range rss[comm] {
			sum += v
			u.RSSMaxKB = max(u.RSSMaxKB, v)
		}
		u.RSSAvgKB = sum / int64(len(rss[comm]))
		out = append(out, *u)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Comm < out[j].Comm })
	return out
}
