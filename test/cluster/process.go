package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/kube-pressure/pressure/internal/source/procfs"
)

// Process is a daemon started by this package. It is identified by PID and by the start time
// the kernel recorded for it, so a PID that has been reused by another program is never
// signalled. A Process loaded from a State file (detached cluster) has no *exec.Cmd.
type Process struct {
	Name      string `json:"name"`
	PID       int    `json:"pid"`
	StartTime uint64 `json:"startTime"` // field 22 of /proc/<pid>/stat, in clock ticks since boot
	Log       string `json:"log"`

	cmd  *exec.Cmd
	done chan struct{} // closed when cmd.Wait returns; nil without cmd
}

// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
const stopTimeout = 15 * time.Second

// startProcess starts argv[0] in its own session with stdout and stderr appended to logPath.
// The extra files are inherited as fds 3, 4, ... (the node lock, so it is held while any node
// daemon lives, even after a detached starter exits).
func startProcess(name, logPath string, argv, env []string, extra ...*os.File) (*Process, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log of %s: %w", name, err)
	}
	defer logFile.Close()
	fmt.Fprintf(logFile, "=== %s: %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(argv, " "))
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	cmd.ExtraFiles = extra
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, argv[0], err)
	}
	p := &Process{Name: name, PID: cmd.Process.Pid, Log: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	if st, ok := procStartTime(p.PID); ok {
		p.StartTime = st
	}
	return p, nil
}

// Alive reports whether the process is still running (a zombie counts as exited).
func (p *Process) Alive() bool {
	if p == nil || p.PID <= 0 {
		return false
	}
	if p.done != nil {
		select {
		case <-p.done:
			return false
		default:
			return true
		}
	}
	st, err := procfs.NewReader("").ProcessStat(p.PID)
	if err != nil || st.State == "Z" || st.State == "X" {
		return false
	}
	return p.StartTime == 0 || st.StartTime == p.StartTime
}

// Stop sends SIGTERM to the process, waits up to timeout, then sends SIGKILL and waits again.
// It returns nil when the process is gone.
func (p *Process) Stop(timeout time.Duration) error {
	if !p.Alive() {
		return nil
	}
	_ = syscall.Kill(p.PID, syscall.SIGTERM)
	if p.waitExit(timeout) {
		return nil
	}
	_ = syscall.Kill(p.PID, syscall.SIGKILL)
	if p.waitExit(10 * time.Second) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) still running after SIGKILL", p.Name, p.PID)
}

func (p *Process) waitExit(timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if !p.Alive() {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return !p.Alive()
}

// exitError describes how a process ended, with the tail of its log.
func (p *Process) exitError() error {
	msg := fmt.Sprintf("%s (pid %d) exited", p.Name, p.PID)
	if p.cmd != nil && p.cmd.ProcessState != nil {
		msg += ": " + p.cmd.ProcessState.String()
	}
	return fmt.Errorf("%s; last lines of %s:\n%s", msg, p.Log, logTail(p.Log, 30))
}

// waitReady polls check until it returns nil, the process exits, or timeout passes.
func (p *Process) waitReady(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		if !p.Alive() {
			return p.exitError()
		}
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		last = check(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s (pid %d) not ready after %s: %w; last lines of %s:\n%s",
				p.Name, p.PID, timeout, last, p.Log, logTail(p.Log, 30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// logTail returns the last n lines of the file at path (or why it cannot).
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Sprintf("(cannot read log: %v)", err)
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// procStartTime returns field 22 (starttime) of /proc/<pid>/stat.
func procStartTime(pid int) (uint64, bool) {
	st, err := procfs.NewReader("").ProcessStat(pid)
	return st.StartTime, err == nil
}

// stopAll stops processes in order and joins the errors.
func stopAll(procs ...*Process) error {
	var errs []error
	for _, p := range procs {
		if p == nil {
			continue
		}
		if err := p.Stop(stopTimeout); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
