package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/test/oomkill"
)

// The neighbours of scenario 1: a Burstable pod over its request and a Guaranteed pod.
var neighbours = []*corev1.Pod{
	benchPod("burst", []string{"mem", "--rate", "0", "--target", "200Mi"}, "64Mi", false),
	benchPod("guar", []string{"mem", "--rate", "0", "--target", "64Mi"}, "128Mi", true),
}

func (b *bench) ensureNamespace(ctx context.Context) error {
	_, err := b.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	return err
}

// resetNode waits until only healthy neighbours are on the node (recreating a neighbour that was evicted,
// killed or restarted), removes the agent's taint and ledger, and lets the pods cgroup settle.
func (b *bench) resetNode(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for _, want := range neighbours {
		p, err := b.client.CoreV1().Pods(ns).Get(ctx, want.Name, metav1.GetOptions{})
		healthy := err == nil && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil &&
			len(p.Status.ContainerStatuses) == 1 && p.Status.ContainerStatuses[0].RestartCount == 0
		if healthy {
			continue
		}
		if err == nil {
			_ = b.client.CoreV1().Pods(ns).Delete(ctx, want.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
			if err := b.waitPods(ctx, "neighbour "+want.Name+" gone", func(ps []corev1.Pod) bool { return !has(ps, want.Name) }); err != nil {
				return err
			}
		}
		if _, err := b.client.CoreV1().Pods(ns).Create(ctx, want.DeepCopy(), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create neighbour %s: %w", want.Name, err)
		}
	}
	err := b.waitPods(ctx, "only the running neighbours on the node", func(ps []corev1.Pod) bool {
		if len(ps) != len(neighbours) {
			return false
		}
		for _, p := range ps {
			if p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
				return false
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	tn := &loopbreaker.Tainter{Client: b.client, Node: b.node.Name()}
	if _, err := tn.Remove(ctx); err != nil {
		return fmt.Errorf("remove leftover taint: %w", err)
	}
	patch := []byte(`{"metadata":{"annotations":{"` + loopbreaker.LedgerAnnotation + `":null}}}`)
	if _, err := b.client.CoreV1().Nodes().Patch(ctx, b.node.Name(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("remove leftover ledger: %w", err)
	}
	return b.settle(ctx)
}

// settle waits (at most 20 s) until the pods working set changes by less than 4Mi in 1 s.
func (b *bench) settle(ctx context.Context) error {
	prev, err := workingSet(b.node.PodsMemoryCgroupDir())
	if err != nil {
		return err
	}
	for range 20 {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
		cur, err := workingSet(b.node.PodsMemoryCgroupDir())
		if err != nil {
			return err
		}
		if d := cur - prev; d < 4<<20 && d > -(4<<20) {
			return nil
		}
		prev = cur
	}
	return nil
}

// waitPods polls the pods bound to the node (but the chart's) until ok.
func (b *bench) waitPods(ctx context.Context, what string, ok func([]corev1.Pod) bool) error {
	sel := fields.OneTermEqualSelector("spec.nodeName", b.node.Name()).String()
	for {
		list, err := b.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err == nil && ok(withoutAgent(list.Items)) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for %s: %w", what, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// withoutAgent drops the chart's pods: the agent pod stays on the node across runs.
func withoutAgent(ps []corev1.Pod) []corev1.Pod {
	var out []corev1.Pod
	for _, p := range ps {
		if p.Namespace != releaseNS {
			out = append(out, p)
		}
	}
	return out
}

func has(ps []corev1.Pod, name string) bool {
	for _, p := range ps {
		if p.Name == name && p.Namespace == ns {
			return true
		}
	}
	return false
}

// workingSet is the cgroup v1 working set as the kubelet computes it: usage - total_inactive_file.
func workingSet(dir string) (int64, error) {
	usage, err := readInt(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return 0, err
	}
	f, err := os.Open(filepath.Join(dir, "memory.stat"))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if ok && k == "total_inactive_file" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s/memory.stat: total_inactive_file %q: %w", dir, v, err)
			}
			return max(0, usage-n), nil
		}
	}
	return 0, fmt.Errorf("%s/memory.stat: no total_inactive_file", dir)
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// kernelOOMSince returns the kernel's OOM kills stamped after mark (oomkill.Mark) in the node's pods
// cgroup, and those whose cgroup the kernel's rate-limited summary leaves unknown: an OOM kill elsewhere
// on the host is not the contender's.
func (b *bench) kernelOOMSince(mark float64) ([]string, error) {
	in, unattributed, err := oomkill.Since(mark, b.node.PodsCgroup())
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range append(in, unattributed...) {
		out = append(out, k.String())
	}
	return out, nil
}
