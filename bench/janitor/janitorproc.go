package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

type janitorProc struct {
	cmd                  *exec.Cmd
	log                  *os.File
	metrics, healthProbe string // host:port
	stopped              bool
}

func startJanitorProcess(ctx context.Context, bin, kubeconfig, dir string, o options, ttl time.Duration, name string) (*janitorProc, error) {
	metrics, health, err := freeAddr(), freeAddr(), error(nil)
	cfg := fmt.Sprintf(`apiVersion: pressure.kube-pressure.io/v1alpha1
kind: JanitorConfiguration
ttl: %s
keepPerOwner: 0
rateLimit: {deletionsPerSecond: %g, burst: %d}
workers: %d
leaderElection: {leaderElect: false}
metricsBindAddress: %q
healthProbeBindAddress: %q
`, ttl, o.rate, o.burst, o.workers, metrics, health)
	path := filepath.Join(dir, name+"-config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, name+".log"))
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
	return &janitorProc{cmd: cmd, log: log, metrics: metrics, healthProbe: health}, nil
}

func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer ln.Close()
	return ln.Addr().String()
}

// waitReady polls /readyz until the janitor's cache has synced.
func (j *janitorProc) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + j.healthProbe + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("janitor not ready after %s", timeout)
}

// memory returns the Go heap in use (go_memstats_heap_inuse_bytes from /metrics) and VmRSS.
func (j *janitorProc) memory() (heap, rss int64, err error) {
	resp, err := http.Get("http://" + j.metrics + "/metrics")
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_memstats_heap_inuse_bytes "); ok {
			f, _ := strconv.ParseFloat(v, 64)
			heap = int64(f)
		}
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", j.cmd.Process.Pid))
	if err != nil {
		return heap, 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			rss = kb << 10
		}
	}
	return heap, rss, sc.Err()
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

// stop ends the process once (later calls do nothing).
func (j *janitorProc) stop() {
	if j.stopped {
		return
	}
	j.stopped = true
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
