package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kube-pressure/pressure/test/cluster"
)

// roundResult is one interleaved backlog round: the janitor, then the plain delete client, each on a
// fresh backlog of o.pods evicted pods.
type roundResult struct {
	janitor, ceiling float64       // deletions/s, first to last deletion
	janitorTook      time.Duration // janitor start → last pod gone
	cpuPerDeletion   time.Duration // janitor process CPU / pods
}

func benchJanitor(ctx context.Context, o options, w *workload, watch *deleteWatch, cp *cluster.ControlPlane, repo, dir string) error {
	bin, err := buildAndEvict(ctx, o, w, repo, dir, "b0")
	if err != nil {
		return err
	}
	// Memory: a janitor with a 1 h TTL caches every pod of round 1's backlog and deletes none.
	if err := measureMemory(ctx, o, "checkout", bin, cp.Kubeconfig(), dir); err != nil {
		return err
	}
	rounds := make([]roundResult, 0, o.rounds)
	for i := range o.rounds {
		r, err := backlogRound(ctx, o, w, watch, cp, bin, dir, i)
		if err != nil {
			return fmt.Errorf("round %d: %w", i+1, err)
		}
		rounds = append(rounds, r)
	}
	printRounds(o, rounds)
	if err := streamJanitor(ctx, o, w, watch, cp, bin, dir); err != nil {
		return err
	}
	if o.leaderKill {
		return leaderKill(ctx, o, w, watch, cp, bin, dir)
	}
	return nil
}

// backlogRound evicts a backlog and lets a fresh janitor process clean it, then evicts another and
// lets the plain delete client clean it.
func backlogRound(ctx context.Context, o options, w *workload, watch *deleteWatch, cp *cluster.ControlPlane, bin, dir string, i int) (roundResult, error) {
	var r roundResult
	if i > 0 { // round 1's backlog is the memory phase's
		if err := evictLogged(ctx, w, fmt.Sprintf("b%d", i)); err != nil {
			return r, err
		}
	}
	j, err := startJanitorProcess(ctx, bin, cp.Kubeconfig(), dir, o, janitorSpec{name: fmt.Sprintf("janitor-backlog-%d", i+1)})
	if err != nil {
		return r, err
	}
	defer j.stop()
	began := time.Now()
	if err := watch.waitRemaining(ctx, w, 0, o.timeout); err != nil {
		return r, err
	}
	r.janitorTook = time.Since(began)
	first, last := watch.span(began)
	r.janitor = float64(o.pods-1) / last.Sub(first).Seconds()
	cpu, _, err := j.usage()
	if err != nil {
		return r, err
	}
	r.cpuPerDeletion = cpu / time.Duration(o.pods)
	j.stop()

	if err := evictLogged(ctx, w, fmt.Sprintf("c%d", i)); err != nil {
		return r, err
	}
	if r.ceiling, err = plainDelete(ctx, w.client, o.workers, watch, w); err != nil {
		return r, err
	}
	fmt.Printf("round %d: janitor %.0f deletions/s (cleaned in %s from its start, %.2f ms CPU per deletion); plain delete client %.0f deletions/s; janitor/ceiling %.2f\n",
		i+1, r.janitor, r.janitorTook.Round(time.Millisecond), float64(r.cpuPerDeletion.Microseconds())/1000, r.ceiling, r.janitor/r.ceiling)
	return r, nil
}

func evictLogged(ctx context.Context, w *workload, prefix string) error {
	took, err := w.evictAll(ctx, prefix)
	if err != nil {
		return err
	}
	fmt.Printf("# evicted %d pods (%s) in %s (%.0f/s)\n", w.o.pods, prefix, took.Round(time.Millisecond), float64(w.o.pods)/took.Seconds())
	return nil
}

func printRounds(o options, rounds []roundResult) {
	var js, cs, ratios, cpus []float64
	for _, r := range rounds {
		js, cs = append(js, r.janitor), append(cs, r.ceiling)
		ratios, cpus = append(ratios, r.janitor/r.ceiling), append(cpus, float64(r.cpuPerDeletion.Microseconds())/1000)
	}
	fmt.Printf("backlog, %d interleaved rounds of %d pods: janitor median %.0f deletions/s %s; plain delete client (%d workers, no rate limit) median %.0f deletions/s %s\n",
		len(rounds), o.pods, median(js), fmtRates(js), o.workers, median(cs), fmtRates(cs))
	fmt.Printf("janitor/ceiling: ratio of medians %.2f; per round %s (median %.2f); janitor CPU per deletion median %.2f ms\n",
		median(js)/median(cs), fmtRatios(ratios), median(ratios), median(cpus))
}

// median of xs (the mean of the middle two for an even count).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func fmtRates(xs []float64) string  { return fmtList(xs, "%.0f") }
func fmtRatios(xs []float64) string { return fmtList(xs, "%.2f") }

func fmtList(xs []float64, verb string) string {
	s := "["
	for i, x := range xs {
		if i > 0 {
			s += " "
		}
		s += fmt.Sprintf(verb, x)
	}
	return s + "]"
}

// streamJanitor evicts o.pods pods while a fresh janitor (ttl 0) runs and measures eviction →
// deletion, then the process's CPU and peak RSS.
func streamJanitor(ctx context.Context, o options, w *workload, watch *deleteWatch, cp *cluster.ControlPlane, bin, dir string) error {
	j, err := startJanitorProcess(ctx, bin, cp.Kubeconfig(), dir, o, janitorSpec{name: "janitor-stream"})
	if err != nil {
		return err
	}
	defer j.stop()
	if err := j.waitReady(ctx, o.timeout); err != nil {
		return err
	}
	r, err := streamPhase(ctx, w, watch, o, "s", 0)
	if err != nil {
		return err
	}
	r.print("janitor (ttl 0s), stream")
	cpu, rss, err := j.usage()
	if err != nil {
		return err
	}
	fmt.Printf("janitor process (stream): %.1f s CPU for %d deletions (%.2f ms per deletion), peak RSS %d MiB\n",
		cpu.Seconds(), o.pods, float64(cpu.Microseconds())/1000/float64(o.pods), rss>>20)
	return nil
}
