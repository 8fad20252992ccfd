package agent

import (
	"runtime/metrics"
	"syscall"
	"time"
)

// cpuTime is CPU time the agent's process has used so far, in user space and in the kernel (reading
// cgroup files, memory.stat's statistics flush among them).
type cpuTime struct{ user, sys time.Duration }

func (c cpuTime) total() time.Duration { return c.user + c.sys }

func (c cpuTime) sub(o cpuTime) cpuTime { return cpuTime{user: c.user - o.user, sys: c.sys - o.sys} }

// processCPU is the CPU time the agent's process has used so far, or zero when the kernel does not say.
// The evict line gives the deciding sync's share of it beside the sync's wall time: a sync that took
// long on little CPU waited (for a CPU: raise the agent's CPU request), one that used most of its wall
// time was slow at the work itself, in user space or in the kernel.
func processCPU() cpuTime {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return cpuTime{}
	}
	return cpuTime{user: time.Duration(ru.Utime.Nano()), sys: time.Duration(ru.Stime.Nano())}
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
