package procfs

// /proc/sys/kernel/pid_max and threads-max, documented in https://docs.kernel.org/admin-guide/sysctl/kernel.html.
// Each holds one decimal number, e.g. "32768".

import (
	"io"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

// ParseSysctlUint parses a sysctl file holding one non-negative integer (pid_max, threads-max).
func ParseSysctlUint(r io.Reader, path string) (uint64, error) {
	return parse.SingleUint(r, path)
}

// PIDs is what pid.available is computed from, as the kubelet's pidlimit_linux.go does.
type PIDs struct {
	PIDMax     uint64
	ThreadsMax uint64
	Tasks      uint64 // total tasks, from /proc/loadavg
}

// Max is min(pid_max, threads-max): the capacity of pid.available.
func (p PIDs) Max() uint64 { return min(p.PIDMax, p.ThreadsMax) }

// Available is Max() − Tasks. It can be negative in theory (tasks counted after a sysctl was lowered).
func (p PIDs) Available() int64 { return int64(p.Max()) - int64(p.Tasks) }

// PIDs reads pid_max, threads-max and the task count.
func (r *Reader) PIDs() (PIDs, error) {
	var p PIDs
	var err error
	if p.PIDMax, err = withFile(r, "sys/kernel/pid_max", ParseSysctlUint); err != nil {
		return PIDs{}, err
	}
	if p.ThreadsMax, err = withFile(r, "sys/kernel/threads-max", ParseSysctlUint); err != nil {
		return PIDs{}, err
	}
	l, err := r.Loadavg()
	if err != nil {
		return PIDs{}, err
	}
	p.Tasks = l.Tasks
	return p, nil
}
