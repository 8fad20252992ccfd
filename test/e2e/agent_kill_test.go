package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/actuate"
)

// agentProcess is the pressure-agent binary running as a host process.
type agentProcess struct {
	cmd *exec.Cmd
	log string
}

// buildAgent builds cmd/pressure-agent into dir.
func buildAgent(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "pressure-agent")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/pressure-agent")
	cmd.Dir = mustRepo()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/pressure-agent: %v\n%s", err, out)
	}
	return bin
}

// startAgentProcess runs the binary with the package node's kubeconfig and name; metrics and probes are
// off, readiness is the "pressure-agent started" log line.
func startAgentProcess(ctx context.Context, t *testing.T, e *env, bin, name string) *agentProcess {
	t.Helper()
	p := &agentProcess{log: filepath.Join(t.TempDir(), name+".log")}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, "--kubeconfig", e.cp.Kubeconfig(), "--node-name", e.node.Name(),
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		_ = p.cmd.Wait()
		f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(p.log)
			t.Logf("%s log:\n%s", name, tail(string(b), 30))
		}
	})
	poll(ctx, t, name+" started", func() (bool, string) {
		b, _ := os.ReadFile(p.log)
		return strings.Contains(string(b), "pressure-agent started"), tail(string(b), 3)
	})
	return p
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func (p *agentProcess) lines(s string) int {
	b, _ := os.ReadFile(p.log)
	return strings.Count(string(b), s)
}

// Scenario 6 with a real kill: the agent binary is SIGKILLed right after its eviction request, during
// pressure, and started again: no pod is evicted twice.
func TestAgentProcessKilledDuringPressureEvictsNoPodTwice(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	bin := buildAgent(t, t.TempDir())
	ns := createNamespace(ctx, t, e, "agent-kill")
	createPod(ctx, t, e, stressPod(ns, "bystander", []string{"mem", "--rate", "0", "--target", "100Mi"}, "", false))
	waitRunning(ctx, t, e, ns, "bystander")
	first := startAgentProcess(ctx, t, e, bin, "first")
	createPod(ctx, t, e, stressPod(ns, "stress", []string{"mem", "--rate", "256Mi", "--target", "1800Mi"}, "", false))
	poll(ctx, t, "first agent evicts stress", func() (bool, string) {
		return first.lines(`"msg":"evict"`) > 0, ""
	})
	if err := first.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	second := startAgentProcess(ctx, t, e, bin, "second")
	time.Sleep(10 * time.Second)
	if n := second.lines(`"outcome":"evicted"`); n != 0 {
		t.Errorf("the restarted agent evicted %d pod(s), want 0", n)
	}
	poll(ctx, t, "one PressureEviction event", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
		return len(evs) == 1 && evs[0].Count == 1 && evs[0].InvolvedObject.Name == "stress", fmt.Sprint(summarize(evs))
	})
	checkOneEvictionRequest(t, e, ns, "stress")
	p, err := e.client.CoreV1().Pods(ns).Get(ctx, "bystander", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp != nil {
		t.Errorf("bystander: %v, deleting %v: want untouched", err, p != nil && p.DeletionTimestamp != nil)
	}
	t.Logf("first agent: %d evict line(s); second agent: %d", first.lines(`"msg":"evict"`), second.lines(`"msg":"evict"`))
}
