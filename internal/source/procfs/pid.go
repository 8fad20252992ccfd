package procfs

// /proc/sys/kernel/pid_max and threads-max, documented in https://docs.kernel.org/admin-guide/sysctl/kernel.html.
// Each holds one decimal number, e.g. "32768".

import (
	"fmt"
	"io"
	"path/filepath"
	"strconv"

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

// ParseOOMScoreAdj parses /proc/<pid>/oom_score_adj: one decimal integer from -1000 to 1000, e.g. "-997"
// (proc(5); the kubelet writes -997 for Guaranteed and node-critical containers, -998 for the pause
// container).
func ParseOOMScoreAdj(r io.Reader, path string) (int, error) {
	s, err := parse.SingleValue(r, path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < -1000 || v > 1000 {
		return 0, &parse.Error{Path: path, Value: s, Err: fmt.Errorf("not an oom_score_adj (-1000 to 1000)")}
	}
	return v, nil
}

// OOMScoreAdj reads the oom_score_adj of process pid.
func (r *Reader) OOMScoreAdj(pid int) (int, error) {
	return withFile(r, filepath.Join(strconv.Itoa(pid), "oom_score_adj"), ParseOOMScoreAdj)
}
