package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/test/chartinstall"
)

// inject carries out f on the cluster and says what it did.
func (c *soakCluster) inject(ctx context.Context, f Fault) (string, error) {
	switch f.Kind {
	case FaultAgentPodDeleted:
		a, err := c.agent(ctx)
		if err != nil {
			return "", err
		}
		if err := c.client.CoreV1().Pods(releaseNS).Delete(ctx, a.Pod.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}); err != nil {
			return "", fmt.Errorf("delete agent pod %s: %w", a.Pod.Name, err)
		}
		return "deleted agent pod " + a.Pod.Name, nil
	case FaultAgentSIGKILL:
		a, err := c.agent(ctx)
		if err != nil {
			return "", err
		}
		pid, err := a.PID(c.node.PodsMemoryCgroupDir())
		if err != nil {
			return "", err
		}
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return "", fmt.Errorf("kill agent pid %d: %w", pid, err)
		}
		return fmt.Sprintf("SIGKILLed agent pid %d of pod %s", pid, a.Pod.Name), nil
	case FaultAPIServerStop:
		if err := c.cp.StopAPIServer(); err != nil {
			return "", err
		}
		stopped := time.Now()
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(f.For)):
		}
		// Start it again even when ctx ended: the rest of the run, and the cleanup, need it.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if err := c.cp.StartAPIServer(sctx); err != nil {
			return "", err
		}
		return fmt.Sprintf("API server stopped for %s", time.Since(stopped).Round(time.Millisecond)), nil
	case FaultLedgerCorrupt:
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{loopbreaker.LedgerAnnotation: corruptLedger}}})
		if _, err := c.client.CoreV1().Nodes().Patch(ctx, c.node.Name(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return "", fmt.Errorf("corrupt the ledger annotation: %w", err)
		}
		return "ledger annotation set to " + corruptLedger, nil
	case FaultKubeletRestart:
		return c.restartNodeProcess(ctx, "kubelet", c.node.RestartKubelet)
	case FaultContainerdRestart:
		return c.restartNodeProcess(ctx, "containerd", c.node.RestartContainerd)
	}
	return "", fmt.Errorf("soak: unknown fault kind %q", f.Kind)
}

// restartNodeProcess runs restart, which restarts the node's process called name, and says which PIDs.
func (c *soakCluster) restartNodeProcess(ctx context.Context, name string, restart func(context.Context) error) (string, error) {
	before, began := c.nodePID(name), time.Now()
	// Bounded apart from ctx, as the API server's restart: the rest of the run needs the node.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer cancel()
	if err := restart(rctx); err != nil {
		return "", fmt.Errorf("restart the %s (pid %d): %w", name, before, err)
	}
	return fmt.Sprintf("restarted the %s (pid %d -> %d) in %s", name, before, c.nodePID(name), time.Since(began).Round(time.Millisecond)), nil
}

// nodePID is the PID of the node's process called name (0: none).
func (c *soakCluster) nodePID(name string) int {
	for _, p := range c.node.Processes() {
		if p.Name == name {
			return p.PID
		}
	}
	return 0
}

// agent is the Ready agent pod on the node (waiting up to a minute: a fault may just have replaced it).
func (c *soakCluster) agent(ctx context.Context) (*chartinstall.Agent, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return chartinstall.WaitAgent(ctx, c.client, releaseNS, c.node.Name())
}
