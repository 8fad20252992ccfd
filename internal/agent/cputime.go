package agent

import (
	"runtime/metrics"
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the agent's process has used so far, or 0 when the
// kernel does not say. The evict line gives the deciding sync's share of it beside the sync's wall
// time: a sync that took long on little CPU waited (for a CPU: raise the agent's CPU request), one that
// used most of its wall time was slow at the work itself.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// gcCycles is how many garbage collections the agent's process has completed so far.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
