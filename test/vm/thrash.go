package vm

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ThrashResult is one ThrashCase run.
type ThrashResult struct {
	// Evicted are the evictions ("agent:NAME", "kubelet:NAME"), OOMKills the pods cgroup's kernel OOM
	// kills, from the thrasher's creation on.
	Evicted  []string
	OOMKills int
	// Decided is how long it took from the thrasher's creation to the first eviction (0: none).
	Decided time.Duration
	// QuietAlive: the quiet pod was Running, not deleted or evicted, at the end.
	QuietAlive bool
	// PeakMiB is the pods cgroup's highest memory.current the sampler saw.
	PeakMiB float64
}

func (r ThrashResult) String() string {
	return fmt.Sprintf("evicted %v (first %s after the thrasher's creation), OOM kills %d, quiet pod alive %t, pods cgroup peak %.0f MiB",
		r.Evicted, r.Decided.Round(100*time.Millisecond), r.OOMKills, r.QuietAlive, r.PeakMiB)
}

// ThrashCase is the v1 node's thrash case (test/e2e TestReclaimAwareEvictsTheThrasher) on the guest:
// in namespace ns a quiet Burstable pod holding 64Mi, then a thrasher that maps a sparse file of
// fileBytes on the scratch disk (larger than the pods cgroup) and reads a byte of every page in a loop,
// so every page it reads was evicted since its last pass. It waits up to wait for an eviction.
func (n *Node) ThrashCase(ctx context.Context, ns string, fileBytes int64, wait time.Duration) (ThrashResult, error) {
	var res ThrashResult
	c := n.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("thrash case namespace: %w", err)
	}
	quiet := withRequest(casePod(n.Name, ns, "quiet", "stress", []string{"mem", "--rate", "0", "--target", "64Mi"}), "64Mi")
	if _, err := c.CoreV1().Pods(ns).Create(ctx, quiet, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("quiet pod: %w", err)
	}
	if err := n.waitRunning(ctx, ns, "quiet", 4*time.Minute); err != nil {
		return res, err
	}
	before := n.lastOOMKills()
	thrash := onDisk(withRequest(casePod(n.Name, ns, "thrash", "stress",
		[]string{"thrash", "--path", "/data/f", "--size", fmt.Sprint(fileBytes), "--sparse"}), "64Mi"), ns)
	created := time.Now()
	if _, err := c.CoreV1().Pods(ns).Create(ctx, thrash, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("thrash pod: %w", err)
	}
	for time.Since(created) < wait && res.Decided == 0 {
		if ev, err := n.evictions(ctx, ns); err == nil && len(ev) > 0 {
			res.Decided = time.Since(created)
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(3 * time.Second) // would anything else go?
	var err error
	if res.Evicted, err = n.evictions(ctx, ns); err != nil {
		return res, err
	}
	res.OOMKills = n.lastOOMKills() - before
	res.PeakMiB, _ = rampOf(n.Samples())
	if p, err := c.CoreV1().Pods(ns).Get(ctx, "quiet", metav1.GetOptions{}); err == nil {
		res.QuietAlive = p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil
	}
	return res, nil
}

// waitRunning waits until pod ns/name is Running.
func (n *Node) waitRunning(ctx context.Context, ns, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		p, err := n.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			return nil
		}
		select {
		case <-ctx.Done():
			state := "not found"
			if p != nil {
				state = podState(p)
			}
			return fmt.Errorf("pod %s/%s not Running after %s: %s", ns, name, timeout, state)
		case <-time.After(500 * time.Millisecond):
		}
	}
}
