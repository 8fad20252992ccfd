package e2edisk

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
	"github.com/kube-pressure/pressure/test/images"
)

func stressPod(ns, name string, args ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers: []corev1.Container{{Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever, Args: args}}},
	}
}

// A fork loop (600 sleeping children, about 7 threads each with the parent's) under a pid.available
// threshold: the agent, acting 3000 tasks before the kubelet (headroom 3000), evicts the forking pod
// and only it; the kubelet evicts nothing.
func TestForkLoopUnderPIDThresholdIsTheOnlyPodEvicted(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := namespace(ctx, t, e, "pid-fork")
	for _, n := range []string{"quiet-a", "quiet-b"} {
		if _, err := e.client.CoreV1().Pods(ns).Create(ctx, stressPod(ns, n, "fork", "--count", "2"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitState(ctx, t, e, ns, "running", "quiet-a", "quiet-b")
	startAgentWith(t, e, func(c *agent.Config) {
		h := c.Settings.Headroom
		h[signal.PIDAvailable] = threshold.Value{Quantity: resource.NewQuantity(3000, resource.DecimalSI)}
	})
	avail0, _, err := pidAvailable()
	if err != nil {
		t.Fatal(err)
	}
	agentAt := pidThreshold + 3000
	t.Logf("pid.available %d; agent threshold %d, kubelet's %d", avail0, agentAt, pidThreshold)
	if avail0 < agentAt+500 {
		t.Fatalf("pid.available %d is already within 500 of the agent's threshold %d: the machine's tasks moved", avail0, agentAt)
	}
	if _, err := e.client.CoreV1().Pods(ns).Create(ctx, stressPod(ns, "forker", "fork", "--count", "600"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var crossed, evicted time.Time
	lowest := avail0
	for evicted.IsZero() {
		if ctx.Err() != nil {
			t.Fatalf("forker not evicted; lowest pid.available %d, state %s", lowest, podState(ctx, e, ns, "forker"))
		}
		a, _, err := pidAvailable()
		if err != nil {
			t.Fatal(err)
		}
		lowest = min(lowest, a)
		if crossed.IsZero() && a < agentAt {
			crossed = time.Now()
		}
		if s := podState(ctx, e, ns, "forker"); s == "terminating" || s == "gone" || strings.HasPrefix(s, "Failed") {
			evicted = time.Now()
			t.Logf("forker %s", s)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("crossed the agent's threshold %s, forker evicted %s later; lowest pid.available %d (kubelet's threshold %d)",
		crossed.Format(time.RFC3339Nano), evicted.Sub(crossed).Round(100*time.Millisecond), lowest, pidThreshold)
	time.Sleep(12 * time.Second)
	for _, n := range []string{"quiet-a", "quiet-b"} {
		if s := podState(ctx, e, ns, n); s != "running" {
			t.Errorf("neighbour %s is %s, want running", n, s)
		}
	}
	agentEv, kubeletEv := evictions(ctx, t, e, ns)
	if !onlyRequest(agentEv, "forker") || len(kubeletEv) != 0 {
		t.Errorf("agent eviction requests %v (want one: forker (201)), kubelet evictions %v (want none)", agentEv, kubeletEv)
	}
}

// filesPod creates count empty files in its emptyDir "data", rate per second, then holds.
func filesPod(ns, name string, count, rate int) *corev1.Pod {
	p := writerPod(ns, name, "0", "0")
	p.Spec.Containers[0].Args = []string{"files", "--path", "/data/files", "--count", strconv.Itoa(count), "--rate", strconv.Itoa(rate)}
	return p
}

func nodefsInodes(t *testing.T, e *env) (free, total int64) {
	var fs unix.Statfs_t
	if err := unix.Statfs(e.node.KubeletRootDir(), &fs); err != nil {
		t.Fatal(err)
	}
	return int64(fs.Ffree), int64(fs.Files)
}

// Inode exhaustion by many small files: a pod creating empty files in its emptyDir takes
// nodefs.inodesFree below the agent's threshold (the kubelet's 5% + the 5% headroom) and stops at 7%,
// above the kubelet's: the agent evicts that pod and only it; the kubelet evicts nothing.
func TestFileCreatorCrossingNodefsInodesIsTheOnlyPodEvicted(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := namespace(ctx, t, e, "inodes")
	for _, n := range []string{"few-a", "few-b"} {
		if _, err := e.client.CoreV1().Pods(ns).Create(ctx, filesPod(ns, n, 200, 0), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitState(ctx, t, e, ns, "running", "few-a", "few-b")
	startAgent(t, e)
	free0, total := nodefsInodes(t, e)
	agentAt, kubeletAt := total*10/100, total*5/100
	count := int(free0 - total*7/100)
	t.Logf("nodefs inodes: %d of %d free; agent threshold about %d, kubelet's %d; creating %d files", free0, total, agentAt, kubeletAt, count)
	if _, err := e.client.CoreV1().Pods(ns).Create(ctx, filesPod(ns, "creator", count, 1500), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var crossed, evicted time.Time
	lowest := free0
	for evicted.IsZero() {
		if ctx.Err() != nil {
			t.Fatalf("creator not evicted; lowest inodesFree %d, state %s", lowest, podState(ctx, e, ns, "creator"))
		}
		f, _ := nodefsInodes(t, e)
		lowest = min(lowest, f)
		if crossed.IsZero() && f < agentAt {
			crossed = time.Now()
		}
		if s := podState(ctx, e, ns, "creator"); s == "terminating" || s == "gone" || strings.HasPrefix(s, "Failed") {
			evicted = time.Now()
			t.Logf("creator %s", s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("crossed the agent's threshold at %s, creator evicted %s later; lowest inodesFree %d (kubelet's threshold %d)",
		crossed.Format(time.RFC3339Nano), evicted.Sub(crossed).Round(100*time.Millisecond), lowest, kubeletAt)
	time.Sleep(12 * time.Second)
	for _, n := range []string{"few-a", "few-b"} {
		if s := podState(ctx, e, ns, n); s != "running" {
			t.Errorf("neighbour %s is %s, want running", n, s)
		}
	}
	agentEv, kubeletEv := evictions(ctx, t, e, ns)
	if !onlyRequest(agentEv, "creator") || len(kubeletEv) != 0 {
		t.Errorf("agent eviction requests %v (want one: creator (201)), kubelet evictions %v (want none)", agentEv, kubeletEv)
	}
}
