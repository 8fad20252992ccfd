package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/images"
)

// TestNodeRestartsKeepRunningPods is level 2: RestartContainerd and RestartKubelet each run a new
// process (another PID), the node is Ready again, a new pod starts, and a pod running before the restart
// still runs in the same container with the same restart count.
func TestNodeRestartsKeepRunningPods(t *testing.T) {
	if p := clustertest.NodeProblem(); p != "" {
		clustertest.SkipOrFail(t, "level-2 node unavailable: %s", p)
	}
	cp := clustertest.ControlPlane(t)
	node := clustertest.Node(t, cp, cluster.NodeOptions{})
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		process string
		restart func(context.Context) error
	}{
		{"containerd restart keeps the running pod", "containerd", node.RestartContainerd},
		{"kubelet restart keeps the running pod", "kubelet", node.RestartKubelet},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			before := runningPod(ctx, t, c, "before-"+tc.process)
			pid := processPID(t, node, tc.process)
			began := time.Now()
			if err := tc.restart(ctx); err != nil {
				t.Fatal(err)
			}
			took := time.Since(began)
			after := processPID(t, node, tc.process)
			t.Logf("%s restarted: pid %d -> %d in %s", tc.process, pid, after, took.Round(time.Millisecond))
			if after == pid {
				t.Errorf("%s pid %d after the restart, want a new process", tc.process, after)
			}
			waitNodeReady(ctx, t, c, node.Name())
			runningPod(ctx, t, c, "after-"+tc.process)
			// Read after the new pod ran: the kubelet has synced the node's pods since the restart.
			now, err := c.CoreV1().Pods("default").Get(ctx, before.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := containerState(now), containerState(before); got != want {
				t.Errorf("pod %s after the %s restart: %s, want %s", before.Name, tc.process, got, want)
			}
		})
	}
}

// processPID is the PID of the node's process called name.
func processPID(t *testing.T, n *cluster.Node, name string) int {
	t.Helper()
	for _, p := range n.Processes() {
		if p.Name == name {
			return p.PID
		}
	}
	t.Fatalf("node has no %s process", name)
	return 0
}

// runningPod creates a pause pod called name in default and waits until it runs with a container ID.
func runningPod(ctx context.Context, t *testing.T, c kubernetes.Interface, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](0),
		Containers:                    []corev1.Container{{Name: "c", Image: images.PauseName, ImagePullPolicy: corev1.PullNever}},
	}}
	if _, err := c.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return waitPod(ctx, t, c, name, func(p *corev1.Pod) bool {
		return p.Status.Phase == corev1.PodRunning && len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].ContainerID != ""
	})
}

// waitPod polls pod default/name until ok says yes, failing the test when ctx ends.
func waitPod(ctx context.Context, t *testing.T, c kubernetes.Interface, name string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	for {
		p, err := c.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil && ok(p) {
			return p
		}
		select {
		case <-ctx.Done():
			if err != nil {
				t.Fatalf("pod %s: %v", name, err)
			}
			t.Fatalf("pod %s: phase %s, containers %+v", name, p.Status.Phase, p.Status.ContainerStatuses)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// containerState is the pod's one container's ID, restart count and whether it runs.
func containerState(p *corev1.Pod) string {
	if len(p.Status.ContainerStatuses) != 1 {
		return fmt.Sprintf("%d container statuses", len(p.Status.ContainerStatuses))
	}
	s := p.Status.ContainerStatuses[0]
	return fmt.Sprintf("container %s, %d restarts, running %t", s.ContainerID, s.RestartCount, s.State.Running != nil)
}

// waitNodeReady waits until node name is Ready.
func waitNodeReady(ctx context.Context, t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	for {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			for _, cond := range n.Status.Conditions {
				if cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("node %s not Ready after the restart: %v", name, err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
