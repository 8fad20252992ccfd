package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type janitorProc struct {
	cmd *exec.Cmd
	log *os.File
}

func startJanitorProcess(ctx context.Context, bin, kubeconfig, dir string, o options) (*janitorProc, error) {
	cfg := fmt.Sprintf(`apiVersion: pressure.kube-pressure.io/v1alpha1
kind: JanitorConfiguration
ttl: 0s
keepPerOwner: 0
rateLimit: {deletionsPerSecond: %g, burst: %d}
workers: %d
leaderElection: {leaderElect: false}
metricsBindAddress: "0"
healthProbeBindAddress: "0"
`, o.rate, o.burst, o.workers)
	path := filepath.Join(dir, "janitor-config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "janitor.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "--config", path, "--kubeconfig", kubeconfig)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	return &janitorProc{cmd: cmd, log: log}, nil
}

// usage reads the janitor's CPU time (user+system) and peak RSS from /proc.
func (j *janitorProc) usage() (time.Duration, int64, error) {
	pid := j.cmd.Process.Pid
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, 0, err
	}
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+2:]))
	utime, _ := strconv.ParseInt(fields[11], 10, 64) // field 14 of stat
	stime, _ := strconv.ParseInt(fields[12], 10, 64) // field 15
	const ticks = 100                                // USER_HZ
	cpu := time.Duration(utime+stime) * time.Second / ticks
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var hwm int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			hwm = kb << 10
		}
	}
	return cpu, hwm, sc.Err()
}

func (j *janitorProc) stop() {
	_ = j.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = j.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = j.cmd.Process.Kill()
		<-done
	}
	j.log.Close()
}
