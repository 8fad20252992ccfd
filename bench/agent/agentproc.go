package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// contender is one way of watching the node.
type contender struct {
	name  string // A, B, C
	label string
	agent bool
	// extra is appended to the agent's configuration file (agent only).
	extra string
}

func contenderByName(s string) (contender, bool) {
	switch s {
	case "A":
		return contender{name: "A", label: "pressure-agent, notifiers on (defaults)", agent: true}, true
	case "B":
		return contender{name: "B", label: "pressure-agent, notifiers off, 10 s sync only", agent: true,
			extra: "notifiers:\n  memcg: false\n  psi: false\n  pollInterval: 10s\n"}, true
	case "D":
		return contender{name: "D", label: "pressure-agent, notifiers on + eviction.allowCgroupKill (trend rung)", agent: true,
			extra: "eviction:\n  allowCgroupKill: true\n"}, true
	case "C":
		return contender{name: "C", label: "kubelet alone (agent not running)"}, true
	}
	return contender{}, false
}

// agentProc is pressure-agent running as a host process.
type agentProc struct {
	cmd     *exec.Cmd
	logPath string
	metrics string
	health  string
	done    chan struct{}
}

// startAgent runs the agent binary with c's configuration and waits for /readyz.
func (b *bench) startAgent(ctx context.Context, c contender, tag string) (*agentProc, error) {
	mport, err := freePort()
	if err != nil {
		return nil, err
	}
	hport, err := freePort()
	if err != nil {
		return nil, err
	}
	a := &agentProc{metrics: "127.0.0.1:" + mport, health: "127.0.0.1:" + hport, done: make(chan struct{}),
		logPath: filepath.Join(b.dir, "agent-"+tag+".log")}
	cfg := fmt.Sprintf("apiVersion: pressure.kube-pressure.io/v1alpha1\nkind: AgentConfiguration\nnodeName: %s\n"+
		"kubeconfig: %s\nkubeletConfigFile: %s\nkubeletRootDir: %s\nmetricsBindAddress: %q\nhealthProbeBindAddress: %q\n%s",
		b.node.Name(), b.cp.Kubeconfig(), b.node.KubeletConfigPath(), b.node.KubeletRootDir(), a.metrics, a.health, c.extra)
	cfgPath := filepath.Join(b.dir, "agent-"+tag+".yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	logf, err := os.Create(a.logPath)
	if err != nil {
		return nil, err
	}
	a.cmd = exec.Command(b.agentBin, "--config", cfgPath)
	a.cmd.Stdout, a.cmd.Stderr = logf, logf
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := a.cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s: %w", b.agentBin, err)
	}
	go func() {
		_ = a.cmd.Wait()
		logf.Close()
		close(a.done)
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		if code, _ := httpGet("http://" + a.health + "/readyz"); code == 200 {
			return a, nil
		}
		select {
		case <-a.done:
			b, _ := os.ReadFile(a.logPath)
			return nil, fmt.Errorf("agent exited at start: %s", tail(string(b), 10))
		case <-ctx.Done():
			a.stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			a.stop()
			return nil, fmt.Errorf("agent not ready within 1m (log %s)", a.logPath)
		}
	}
}

// stop sends SIGTERM (the agent removes its taint) and SIGKILL after 15 s.
func (a *agentProc) stop() {
	if a == nil || a.cmd.Process == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-a.done:
	case <-time.After(15 * time.Second):
		_ = a.cmd.Process.Kill()
		<-a.done
	}
}

// metric returns the value of the first /metrics sample line starting with name.
func (a *agentProc) metric(name string) (string, bool) {
	_, body := httpGet("http://" + a.metrics + "/metrics")
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, name+" ") {
			return strings.TrimSpace(strings.TrimPrefix(l, name)), true
		}
	}
	return "", false
}

func (a *agentProc) log() string {
	b, _ := os.ReadFile(a.logPath)
	return string(b)
}

func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	_, p, err := net.SplitHostPort(l.Addr().String())
	return p, err
}

func httpGet(url string) (int, string) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
