package main

import (
	"time"

	"golang.org/x/sys/unix"
)

// cpuTime is user+system CPU of this process (threads included, children excluded).
func cpuTime() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuResult is the CPU one mechanism used over an idle period, with the idle process's own use
// subtracted, scaled to one hour.
type cpuResult struct {
	perHour time.Duration
	raw     time.Duration
	err     string
}

// measureCPU runs each mechanism alone for cfg.idle with nothing crossing its threshold.
func measureCPU(cfg config, dir string, threshold int64) (map[string]cpuResult, error) {
	idle := func() time.Duration {
		before := cpuTime()
		time.Sleep(cfg.idle)
		return cpuTime() - before
	}
	baseline := idle()
	out := map[string]cpuResult{"(idle process)": {raw: baseline, perHour: scale(baseline, cfg.idle)}}
	for _, name := range cfg.mechanismNames() {
		r, err := build(cfg, name, dir, threshold)
		if err != nil {
			out[name] = cpuResult{err: err.Error()}
			continue
		}
		ctx, cancel := ctxFor()
		m := start(ctx, name, r)
		used := idle()
		cancel()
		<-m.done
		net := max(used-baseline, 0)
		out[name] = cpuResult{raw: used, perHour: scale(net, cfg.idle)}
	}
	return out, nil
}

func scale(d, over time.Duration) time.Duration {
	return time.Duration(float64(d) * float64(time.Hour) / float64(over))
}
