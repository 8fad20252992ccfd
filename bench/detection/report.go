package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(p/100*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}

func ms(ns int64) string { return fmt.Sprintf("%.1f ms", float64(ns)/1e6) }

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(max(len(xs), 1))
}

func report(w io.Writer, cfg config, lat *latencies, cpu map[string]cpuResult, notes map[string]string, took time.Duration) {
	fmt.Fprintf(w, "Run at %s, took %s. Threshold = cgroup usage before the first ramp + %d MiB; each ramp "+
		"allocates %d MiB in %d KiB steps, holds %s, frees, settles %s.\n\n",
		time.Now().UTC().Format(time.RFC3339), took.Round(time.Second), cfg.offset/mib, cfg.ramp/mib, cfg.chunk/1024, cfg.hold, cfg.settle)
	fmt.Fprintln(w, "| mechanism | ramp (asked → achieved) | crossings | detected | p50 | p99 | max |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, name := range cfg.mechanismNames() {
		rates := make([]int64, 0, len(lat.ns[name])+len(lat.missed[name]))
		seen := map[int64]bool{}
		for r := range lat.ns[name] {
			rates, seen[r] = append(rates, r), true
		}
		for r := range lat.missed[name] {
			if !seen[r] {
				rates = append(rates, r)
			}
		}
		sort.Slice(rates, func(i, j int) bool { return abs(rates[i]) < abs(rates[j]) })
		if len(rates) == 0 {
			fmt.Fprintf(w, "| %s | – | 0 | – | – | – | – |\n", name)
		}
		for _, r := range rates {
			row(w, name, r, lat)
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "| mechanism | CPU per hour idle (net of the idle process) | raw CPU over %s |\n|---|---|---|\n", cfg.idle)
	for _, name := range append([]string{"(idle process)"}, cfg.mechanismNames()...) {
		c := cpu[name]
		if c.err != "" {
			fmt.Fprintf(w, "| %s | not measured: %s | – |\n", name, c.err)
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", name, c.perHour.Round(time.Millisecond), c.raw.Round(time.Microsecond))
	}
	fmt.Fprintf(w, "\nAnalytical 10 s periodic poll: a crossing at a uniformly random phase waits U(0, 10 s) for the "+
		"next read: p50 = 5.0 s, p99 = 9.9 s (plus the read itself).\n")
	names := make([]string, 0, len(notes))
	for n := range notes {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "\nNote %s: %s\n", n, strings.TrimSpace(notes[n]))
	}
}

func row(w io.Writer, name string, r int64, lat *latencies) {
	xs := append([]int64(nil), lat.ns[name][r]...)
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	n := len(xs) + lat.missed[name][r]
	label := fmt.Sprintf("%d MiB/s → %.0f MiB/s", abs(r), mean(lat.rates[abs(r)]))
	if r < 0 {
		label += " (held until it fired)"
	}
	if len(xs) == 0 {
		fmt.Fprintf(w, "| %s | %s | %d | 0 | – | – | – |\n", name, label, n)
		return
	}
	fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %s | %s |\n", name, label, n, len(xs),
		ms(percentile(xs, 50)), ms(percentile(xs, 99)), ms(xs[len(xs)-1]))
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
