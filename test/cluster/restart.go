package cluster

import (
	"context"
	"fmt"
)

// RestartContainerd stops the node's containerd (SIGTERM, SIGKILL after 15 s, as Stop does) and starts
// it again with the same command line, configuration, log (appended) and inherited node lock, then
// waits until its socket answers. The containers keep running through it: their shims outlive
// containerd, which reconnects to them at start.
func (n *Node) RestartContainerd(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	p, err := n.restart(n.containerd, func() (*Process, error) {
		return startContainerd(ctx, n.containerdRun, n.lock, n.timeout)
	})
	if p != nil {
		n.containerd = p
	}
	return err
}

// RestartKubelet stops the node's kubelet (SIGTERM, SIGKILL after 15 s, as Stop does) and starts it
// again with the same command line, configuration, log (appended) and inherited node lock, then waits
// until its healthz answers and the node is Ready by a heartbeat of the new kubelet. The running pods
// keep running through it: the new kubelet adopts them from the container runtime.
func (n *Node) RestartKubelet(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	p, err := n.restart(n.kubelet, func() (*Process, error) {
		return startKubelet(ctx, n.cp, n.kubeletRun, n.lock, n.timeout)
	})
	if p != nil {
		n.kubelet = p
	}
	return err
}

// restart stops old and runs start; the process start returns, even with an error (it may be running
// but not ready), replaces old so Stop stops it.
func (n *Node) restart(old *Process, start func() (*Process, error)) (*Process, error) {
	if old == nil || n.lock == nil {
		return nil, fmt.Errorf("restart on node %s: not started", n.name)
	}
	if err := old.Stop(stopTimeout); err != nil {
		return nil, fmt.Errorf("restart %s on node %s: stop: %w", old.Name, n.name, err)
	}
	p, err := start()
	if err != nil {
		return p, fmt.Errorf("restart %s on node %s (was pid %d): %w", old.Name, n.name, old.PID, err)
	}
	return p, nil
}
