package vm

import (
	"math"
	"strconv"
	"testing"
	"time"
)

func TestUsageOverSumsTheProcessesOfANameAndLeavesOutOnesOutsideTheWindow(t *testing.T) {
	base := time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)
	at := func(s int) string { return strconv.FormatInt(base.Add(time.Duration(s)*time.Second).UnixNano(), 10) }
	lines := []string{
		// the agent: 150 ticks (1.5 s of CPU) in 60 s: 2.5 % of a core
		markCost + at(0) + " pressure-agent 41 1000 30000 31000",
		markCost + at(60) + " pressure-agent 41 1150 34000 36000",
		// two janitors: 30 and 60 ticks in 60 s: 0.5 % + 1 %
		markCost + at(0) + " pressure-janito 50 100 20000 20000",
		markCost + at(0) + " pressure-janito 51 100 22000 22000",
		markCost + at(60) + " pressure-janito 50 130 20000 21000",
		markCost + at(60) + " pressure-janito 51 160 24000 25000",
		// a kubelet line before the window, and one process seen once: left out
		markCost + at(-10) + " kubelet 7 0 1 1",
		markCost + at(60) + " kubelet 7 9000 90000 90000",
		"=== pressure-vm cost garbage",
	}
	var samples []CostSample
	for _, l := range lines {
		if s, ok := parseCost(l); ok {
			samples = append(samples, s)
		}
	}
	if len(samples) != 8 {
		t.Fatalf("parsed %d samples, want 8 (the garbage line refused)", len(samples))
	}
	got := UsageOver(samples, base, base.Add(time.Minute))
	if len(got) != 2 || got[0].Comm != "pressure-agent" || got[1].Comm != "pressure-janito" {
		t.Fatalf("usages %+v, want the agent and the janitors (the kubelet has one sample in the window)", got)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	if a := got[0]; !near(a.CorePercent, 2.5) || a.RSSAvgKB != 32000 || a.RSSMaxKB != 34000 || a.HWMKB != 36000 || a.Processes != 1 {
		t.Errorf("agent usage %+v, want 2.5 %%, RSS avg 32000 max 34000 kB, VmHWM 36000 kB, 1 process", a)
	}
	if j := got[1]; !near(j.CorePercent, 1.5) || j.RSSAvgKB != 43000 || j.RSSMaxKB != 44000 || j.HWMKB != 46000 || j.Processes != 2 {
		t.Errorf("janitor usage %+v, want 1.5 %% (0.5 + 1), RSS avg 43000 max 44000 kB (summed), VmHWM 46000 kB, 2 processes", j)
	}
}
