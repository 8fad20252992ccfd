package agent

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the agent's process has used so far, or false when the
// kernel does not say. The evict line gives the deciding sync's share of it beside the sync's wall
// time: a sync that took long on little CPU waited (for a CPU: raise the agent's CPU request), one that
// used most of its wall time was slow at the work itself.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
