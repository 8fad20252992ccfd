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
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kube-pressure/pressure/internal/source/procfs"
)

type janitorProc struct {
	cmd                  *exec.Cmd
	log                  *os.File
	logPath              string
	metrics, healthProbe string // host:port
	stopped              bool
}

// janitorSpec is what differs between the janitor processes of a run.
type janitorSpec struct {
	name        string // of its config and log files
	ttl         time.Duration
	leaderElect bool // with the default lease timings (15 s, 10 s, 2 s)
	// profiling serves /debug/pprof/ (--profiling) and writes the runtime's GC trace
	// (GODEBUG=gctrace=1) to the log, for the memory measurement.
	profiling  bool
	goMemLimit string // GOMEMLIMIT of the process ("": unset)
}

func startJanitorProcess(ctx context.Context, bin, kubeconfig, dir string, o options, s janitorSpec) (*janitorProc, error) {
	metrics, health := freeAddr(), freeAddr()
	cfg := fmt.Sprintf(`apiVersion: pressure.kube-pressure.io/v1alpha1
kind: JanitorConfiguration
ttl: %s
keepPerOwner: 0
rateLimit: {deletionsPerSecond: %g, burst: %d}
workers: %d
leaderElection: {leaderElect: %t}
metricsBindAddress: %q
healthProbeBindAddress: %q
`, s.ttl, o.rate, o.burst, o.workers, s.leaderElect, metrics, health)
	path := filepath.Join(dir, s.name+"-config.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, s.name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"--config", path, "--kubeconfig", kubeconfig}
	cmd := exec.CommandContext(ctx, bin, args...)
	if s.profiling {
		cmd.Args = append(cmd.Args, "--profiling")
		cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1")
	}
	if s.goMemLimit != "" {
		cmd.Env = append(cmd.Environ(), "GOMEMLIMIT="+s.goMemLimit)
	}
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	return &janitorProc{cmd: cmd, log: log, logPath: logPath, metrics: metrics, healthProbe: health}, nil
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

// scrape returns every sample of the janitor's /metrics, keyed by the text before the value
// (`name{labels}`).
func (j *janitorProc) scrape() (map[string]float64, error) {
	resp, err := http.Get("http://" + j.metrics + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	samples := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		if strings.HasPrefix(line, "#") || i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			samples[line[:i]] = v
		}
	}
	return samples, sc.Err()
}

// sum adds the samples of one metric over the label values that contain every one of labels
// (`result="conflict"`).
func sum(samples map[string]float64, name string, labels ...string) float64 {
	var total float64
	for k, v := range samples {
		if k != name && !strings.HasPrefix(k, name+"{") {
			continue
		}
		if !slices.ContainsFunc(labels, func(l string) bool { return !strings.Contains(k, l) }) {
			total += v
		}
	}
	return total
}

// memory returns the Go heap in use (go_memstats_heap_inuse_bytes from /metrics) and VmRSS.
func (j *janitorProc) memory() (heap, rss int64, err error) {
	samples, err := j.scrape()
	if err != nil {
		return 0, 0, err
	}
	heap = int64(samples["go_memstats_heap_inuse_bytes"])
	m, err := procfs.NewReader("").ProcessMemory(j.cmd.Process.Pid)
	if err != nil {
		return heap, 0, err
	}
	return heap, m.RSS, nil
}

// usage reads the janitor's CPU time (user+system) and peak RSS from /proc.
func (j *janitorProc) usage() (time.Duration, int64, error) {
	proc := procfs.NewReader("")
	st, err := proc.ProcessStat(j.cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	m, err := proc.ProcessMemory(j.cmd.Process.Pid)
	if err != nil {
		return 0, 0, err
	}
	return st.CPU(), m.HWM, nil
}

// kill sends SIGKILL: no lease release, no flush; stop then only reaps it.
func (j *janitorProc) kill() error { return j.cmd.Process.Kill() }

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
