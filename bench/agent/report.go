package main

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

type report struct {
	opts              options
	dir               string
	started, finished time.Time
	runs              []runResult
	steady            []steadyResult
	values            []string // the chart values set beside the defaults
	err               error
}

func mib(n int64) string { return fmt.Sprintf("%.0fMi", float64(n)/(1<<20)) }

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond)) }

// line is one run, for the progress log and the report's run list.
func (r runResult) line() string {
	lat := "-"
	if d, ok := r.latency(); ok {
		lat = ms(d)
	}
	end := "-"
	if !r.crossTime.IsZero() && !r.endTime.IsZero() {
		end = ms(r.endTime.Sub(r.crossTime))
	}
	logCross := "-"
	if !r.crossTime.IsZero() && !r.logCrossTime.IsZero() {
		logCross = ms(r.logCrossTime.Sub(r.crossTime))
	}
	recv, answered := "-", "-"
	if d, ok := r.received(); ok {
		recv = ms(d)
		if !r.apiAnswered.IsZero() {
			answered = ms(r.apiAnswered.Sub(r.apiReceived))
		}
	}
	s := fmt.Sprintf("%s %s #%d: baseline %s, cross at stress %s (stress log there %s after the sampled crossing), achieved %.0f MiB/s (%d allocs), crossing→API server received the eviction %s (answered %s later), crossing→evict logged %s (agent metric %s), crossing→stress pod gone/terminated %s, agent victims %v, trend kill %v, kernel OOM kills %d, OOMKilled %v, kubelet evicted %v",
		r.c.name, r.rate, r.idx, mib(r.baseline), mib(r.crossAt), logCross, r.achieved/(1<<20), r.allocs, recv, answered, lat, orDash(r.metricLat), end,
		r.victims, r.trendKill, len(r.kernelOOM), r.oomKilled, r.kubelet)
	if r.err != nil {
		s += fmt.Sprintf(" ERROR: %v", r.err)
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func (rep *report) markdown() string {
	var b strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&b, "# bench/agent: %s to %s UTC, host %s, %d CPUs, %s, load %s\n\n", rep.started.Format("2006-01-02 15:04:05"),
		rep.finished.Format("15:04:05"), host, runtime.NumCPU(), runtime.Version(), loadavg())
	fmt.Fprintf(&b, "runs per contender and rate: %d; rates %s; pods cgroup limit %s; kubelet evictionHard memory.available and allocatableMemory.available <%s, kernelMemcgNotification false; agent: chart deploy/helm/pressure, release %s, defaults and --set %s; its threshold %s + %s headroom\n\n",
		rep.opts.runs, strings.Join(rep.opts.rates, ", "), mib(podsLimit), kubeletThreshold, release, strings.Join(rep.values, " --set "), kubeletThreshold, agentHeadroom)
	b.WriteString("Contenders (each agent contender is installed with helm upgrade --reset-values: the node's values above and its own):\n\n")
	for _, c := range rep.opts.contenders {
		set := "none (the chart's defaults)"
		switch {
		case !c.agent:
			set = "agent pod off the node"
		case len(c.values) > 0:
			set = "--set " + strings.Join(c.values, " --set ")
		}
		fmt.Fprintf(&b, "- %s: %s; %s\n", c.name, c.label, set)
	}
	b.WriteString("\n")
	b.WriteString("| rate (asked → achieved) | contender | runs | agent evicted the stress pod | crossing → eviction request received by the API server (audit log) p50 / p99 | crossing → eviction answered (agent's log) p50 / p99 | agent's own metric, median | crossing → stress pod gone or terminated p50 / max | trend kills | kernel OOM kills (runs) | OOMKilled containers | kubelet evictions | other pods evicted by the agent |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, rate := range rep.opts.rates {
		for _, c := range rep.opts.contenders {
			if !c.steadyOnly {
				b.WriteString(rep.row(rate, c))
			}
		}
	}
	if len(rep.steady) > 0 {
		b.WriteString("\n| round | contender | pods on the node | window | CPU (utime+stime) | CPU % of one core | RSS avg / max | VmHWM |\n|---|---|---|---|---|---|---|---|\n")
		for _, s := range rep.steady {
			fmt.Fprintf(&b, "| %d | %s: %s | %d (+%d neighbours) | %s | %s | %.2f %% | %s / %s | %s |\n", s.round, s.c.name, s.c.label, s.pods, len(neighbours), s.window,
				s.cpu, 100*s.cpu.Seconds()/s.window.Seconds(), mib(s.rssAvg), mib(s.rssMax), mib(s.hwm))
		}
		b.WriteString(steadyMedians(rep.steady))
	}
	b.WriteString("\nCPU from utime+stime of the agent's process (its host PID from its container's cgroup.procs), RSS sampled every second from /proc/<pid>/status.\n")
	b.WriteString("\nRuns (in order):\n\n```\n")
	for _, r := range rep.runs {
		b.WriteString(r.line() + "\n")
	}
	b.WriteString("```\n")
	if rep.err != nil {
		fmt.Fprintf(&b, "\nStopped early: %v\n", rep.err)
	}
	fmt.Fprintf(&b, "\nLogs (agent, stress pods, cluster): %s\n", rep.dir)
	return b.String()
}

func (rep *report) row(rate string, c contender) string {
	var rs []runResult
	for _, r := range rep.runs {
		if r.rate == rate && r.c.name == c.name && r.err == nil {
			rs = append(rs, r)
		}
	}
	var lats, recvs, ends []time.Duration
	var metrics []string
	var achieved float64
	evicted, trend, ooms, oomRuns, oomKilled, kubelet := 0, 0, 0, 0, 0, 0
	other := map[string]bool{}
	for _, r := range rs {
		achieved += r.achieved / float64(len(rs))
		if d, ok := r.latency(); ok {
			lats = append(lats, d)
		}
		if d, ok := r.received(); ok && r.c.agent {
			recvs = append(recvs, d)
		}
		if !r.crossTime.IsZero() && !r.endTime.IsZero() {
			ends = append(ends, r.endTime.Sub(r.crossTime))
		}
		if r.metricLat != "" && r.metricLat != "-" {
			metrics = append(metrics, r.metricLat)
		}
		stressEvicted := false
		for _, v := range r.victims {
			if strings.HasPrefix(v, ns+"/stress-") {
				stressEvicted = true
			} else {
				other[v] = true
			}
		}
		if stressEvicted {
			evicted++
		}
		if r.trendKill {
			trend++
		}
		ooms += len(r.kernelOOM)
		if len(r.kernelOOM) > 0 {
			oomRuns++
		}
		oomKilled += len(r.oomKilled)
		kubelet += len(r.kubelet)
	}
	q := bytesOf(rate)
	latCol, recvCol, endCol := "–", "–", "–"
	if len(lats) > 0 {
		latCol = fmt.Sprintf("%s / %s (n=%d)", ms(percentile(lats, 50)), ms(percentile(lats, 99)), len(lats))
	}
	if len(recvs) > 0 {
		recvCol = fmt.Sprintf("%s / %s (n=%d)", ms(percentile(recvs, 50)), ms(percentile(recvs, 99)), len(recvs))
	}
	if len(ends) > 0 {
		endCol = fmt.Sprintf("%s / %s", ms(percentile(ends, 50)), ms(percentile(ends, 100)))
	}
	metricCol := "–"
	if c.agent && len(metrics) > 0 {
		metricCol = medianString(metrics)
	}
	evCol, trendCol := "–", "–"
	if c.agent {
		evCol, trendCol = fmt.Sprintf("%d of %d", evicted, len(rs)), fmt.Sprint(trend)
	}
	var others []string
	for k := range other {
		others = append(others, k)
	}
	sortStrings(others)
	return fmt.Sprintf("| %d MiB/s → %.0f MiB/s | %s: %s | %d | %s | %s | %s | %s | %s | %s | %d (%d) | %d | %d | %s |\n",
		q>>20, achieved/(1<<20), c.name, c.label, len(rs), evCol, recvCol, latCol, metricCol, endCol, trendCol, ooms, oomRuns, oomKilled, kubelet, orDash(strings.Join(others, ", ")))
}

// medianString returns the median of "<n> ms" strings (others are ignored).
func medianString(ss []string) string {
	var ds []time.Duration
	for _, s := range ss {
		var v float64
		if _, err := fmt.Sscanf(s, "%f ms", &v); err == nil {
			ds = append(ds, time.Duration(v*float64(time.Millisecond)))
		}
	}
	if len(ds) == 0 {
		return "–"
	}
	return ms(percentile(ds, 50))
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
