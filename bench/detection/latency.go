package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"time"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

// crossing is one upward crossing: when it happened and until when a wake-up still counts.
type crossing struct {
	rate         int64 // MiB/s asked
	achieved     float64
	at, deadline int64
}

// latencies[mechanism][rate] = latencies in ns; missed[mechanism][rate] = crossings without a wake-up.
type latencies struct {
	ns     map[string]map[int64][]int64
	missed map[string]map[int64]int
	runs   map[int64]int
	rates  map[int64][]float64
}

func newLatencies() *latencies {
	return &latencies{ns: map[string]map[int64][]int64{}, missed: map[string]map[int64]int{},
		runs: map[int64]int{}, rates: map[int64][]float64{}}
}

// crossingTime interpolates when base+bytes passed threshold from the hog's ramp log.
func crossingTime(pts []cgrouptest.RampPoint, base, threshold int64) (int64, bool) {
	prevT, prevB := int64(0), int64(0)
	for i, p := range pts {
		if base+p.Bytes >= threshold {
			if i == 0 {
				return p.T, true
			}
			frac := float64(threshold-base-prevB) / float64(p.Bytes-prevB)
			return prevT + int64(frac*float64(p.T-prevT)), true
		}
		prevT, prevB = p.T, p.Bytes
	}
	return 0, false
}

// oneCrossing ramps, holds until hold reports true, frees, and waits until settled reports true.
func oneCrossing(cfg config, dir string, hog *cgrouptest.Hog, threshold, rate int64, hold, settled func() bool) (crossing, error) {
	base, err := cgrouptest.ReadUint(filepath.Join(dir, cfg.usageFile()))
	if err != nil {
		return crossing{}, err
	}
	if int64(base) >= threshold {
		return crossing{}, fmt.Errorf("usage %d already above threshold %d before a ramp", base, threshold)
	}
	pts, err := hog.Ramp(cfg.ramp, rate*mib, cfg.chunk)
	if err != nil {
		return crossing{}, err
	}
	at, ok := crossingTime(pts, int64(base), threshold)
	if !ok {
		return crossing{}, fmt.Errorf("ramp of %d bytes from %d never reached %d", cfg.ramp, base, threshold)
	}
	for !hold() {
		time.Sleep(10 * time.Millisecond)
	}
	c := crossing{rate: rate, at: at, deadline: cgrouptest.MonoNow(),
		achieved: float64(pts[len(pts)-1].Bytes-pts[0].Bytes) / float64(pts[len(pts)-1].T-pts[0].T) * 1e9 / mib}
	if err := hog.Free(); err != nil {
		return c, err
	}
	for !settled() {
		time.Sleep(10 * time.Millisecond)
	}
	return c, nil
}

// firstWake returns the first wake-up in [from, to).
func firstWake(wakes []int64, from, to int64) (int64, bool) {
	i := sort.Search(len(wakes), func(i int) bool { return wakes[i] >= from })
	if i < len(wakes) && wakes[i] < to {
		return wakes[i], true
	}
	return 0, false
}

// earlyMargin lets a wake-up count if it precedes the interpolated crossing by at most this much: the
// kernel checks memcg thresholds every few hundred pages, inside a ramp step.
const earlyMargin = int64(5 * time.Millisecond)

func (l *latencies) add(name string, c crossing, wakes []int64) {
	if l.ns[name] == nil {
		l.ns[name], l.missed[name] = map[int64][]int64{}, map[int64]int{}
	}
	if w, ok := firstWake(wakes, c.at-earlyMargin, c.deadline); ok {
		l.ns[name][c.rate] = append(l.ns[name][c.rate], w-c.at)
		return
	}
	l.missed[name][c.rate]++
}

// measureLatency runs every mechanism at once over cfg.crossings crossings per rate, then the 10 s
// periodic poll over cfg.baseline crossings held until it fires.
func measureLatency(cfg config, dir string, hog *cgrouptest.Hog, threshold int64) (*latencies, map[string]string, error) {
	ctx, cancel := ctxFor()
	defer cancel()
	notes := map[string]string{}
	ms := map[string]*mechanism{}
	for _, name := range cfg.mechanismNames() {
		if name == "poll-10s" {
			continue // measured on its own crossings, below
		}
		r, err := build(cfg, name, dir, threshold)
		if err != nil {
			notes[name] = err.Error()
			continue
		}
		ms[name] = start(ctx, name, r)
	}
	lat := newLatencies()
	var all []crossing
	for _, rate := range cfg.rates {
		for i := 0; i < cfg.crossings; i++ {
			c, err := oneCrossing(cfg, dir, hog, threshold, rate, after(cfg.hold), after(cfg.hold+cfg.settle))
			if err != nil {
				return nil, nil, err
			}
			all = append(all, c)
			lat.runs[rate]++
			lat.rates[rate] = append(lat.rates[rate], c.achieved)
		}
	}
	if cfg.baseline > 0 {
		base, err := measureBaseline(ctx, cfg, dir, hog, threshold)
		if err != nil {
			return nil, nil, err
		}
		all = append(all, base.crossings...)
		ms["poll-10s"] = base.poller
	}
	cancel()
	for name, m := range ms {
		<-m.done
		if m.err != nil {
			notes[name] = m.err.Error()
		}
		wakes := m.times()
		for _, c := range all {
			if (c.rate < 0) != (name == "poll-10s") {
				continue
			}
			lat.add(name, c, wakes)
		}
	}
	return lat, notes, nil
}

// after returns a func reporting whether d has passed since after was called.
func after(d time.Duration) func() bool {
	deadline := time.Now().Add(d)
	return func() bool { return time.Now().After(deadline) }
}

type baseline struct {
	poller    *mechanism
	crossings []crossing
}

// measureBaseline measures the 10 s periodic poll (the kubelet without a notifier) on its own crossings.
// A fresh poller starts after the fast crossings so that its last reading is "below"; before each ramp
// the benchmark waits a random 0-10 s so the crossing falls at a random phase of the poll period. It
// holds the memory until the poller fires, then stays freed until the poller has seen usage fall again
// (a 10 s poll misses shorter dips).
func measureBaseline(ctx context.Context, cfg config, dir string, hog *cgrouptest.Hog, threshold int64) (baseline, error) {
	r, err := build(cfg, "poll-10s", dir, threshold)
	if err != nil {
		return baseline{}, err
	}
	p := start(ctx, "poll-10s", r)
	rng := rand.New(rand.NewPCG(cfg.seed, 0))
	rate := cfg.rates[len(cfg.rates)/2]
	var out []crossing
	for i := 0; i < cfg.baseline; i++ {
		time.Sleep(time.Duration(rng.Int64N(int64(10 * time.Second))))
		n := len(p.times())
		up, down := after(12*time.Second), after(24*time.Second)
		c, err := oneCrossing(cfg, dir, hog, threshold, rate,
			func() bool { return len(p.times()) > n || up() },
			func() bool { return len(p.times()) > n+1 || down() })
		if err != nil {
			return baseline{}, err
		}
		c.rate = -rate // marks the held-until-fired baseline crossings
		out = append(out, c)
	}
	return baseline{poller: p, crossings: out}, nil
}
