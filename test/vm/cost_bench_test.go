package vm_test

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/images"
	"github.com/kube-pressure/pressure/test/vm"
)

var (
	costFor    = flag.Duration("v2cost.for", 0, "window of each round of TestChartCostOnCgroupV2Bench (0 skips it)")
	costRounds = flag.Int("v2cost.rounds", 2, "rounds of TestChartCostOnCgroupV2Bench")
	costPods   = flag.Int("v2cost.pods", 0, "sleeping pods TestChartCostOnCgroupV2Bench adds to the node")
)

// costSettle is how long the cost benchmark lets the node settle after the chart's install and the
// sleeping pods before its first window.
const costSettle = 30 * time.Second

// TestChartCostOnCgroupV2Bench is issue 27's cost as deployed, on the v2 guest: the chart with its
// defaults (the agent and the janitor) on the race node with -v2cost.pods sleeping pods, and, over the
// same windows, the CPU and RSS of the agent, the janitor, the kubelet and containerd from the guest's
// cost sampler (docs/benchmarks.md, "Agent cost"). It runs only with -v2cost.for.
func TestChartCostOnCgroupV2Bench(t *testing.T) {
	if *costFor <= 0 {
		// Not an environment skip: an opt-in measurement of minutes (docs/benchmarks.md).
		t.Skip("the v2 cost benchmark runs only with -v2cost.for DURATION (see docs/benchmarks.md)")
	}
	ctx := context.Background()
	p := startParts(ctx, t)
	c := buildChartParts(ctx, t)
	opt := raceNode(t.TempDir(), "")
	opt.PodNetwork, opt.CostEvery = true, 5*time.Second
	opt.Images = append(slices.Clone(p.images), c.images...)
	n := p.startNode(ctx, t, opt)
	c.installForTest(ctx, t, p, n)
	if err := sleepingPods(ctx, n, "cost", *costPods); err != nil {
		t.Fatal(err)
	}
	all, err := n.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(costSettle)
	var b strings.Builder
	fmt.Fprintf(&b, "%d pods on the node\n\n| round | process | processes | window | CPU %% of one core | RSS avg / max MiB | VmHWM MiB |\n|---|---|---|---|---|---|---|\n", len(all.Items))
	for r := range *costRounds {
		from := lastCost(t, n)
		time.Sleep(*costFor)
		for _, u := range vm.UsageOver(n.Cost(), from, lastCost(t, n)) {
			t.Logf("round %d: %s", r+1, u)
			fmt.Fprintf(&b, "| %d | %s | %d | %s | %.2f | %.1f / %.1f | %.1f |\n", r+1, u.Comm, u.Processes, u.Window.Round(time.Second),
				u.CorePercent, float64(u.RSSAvgKB)/1024, float64(u.RSSMaxKB)/1024, float64(u.HWMKB)/1024)
		}
	}
	t.Log("\n" + b.String())
}

// lastCost is the guest time of the cost sampler's latest line.
func lastCost(t *testing.T, n *vm.Node) time.Time {
	t.Helper()
	s := n.Cost()
	if len(s) == 0 {
		t.Fatal("no line of the guest's cost sampler yet")
	}
	return s[len(s)-1].At
}

// sleepingPods creates count BestEffort pause pods in namespace ns on the node and waits until all run.
func sleepingPods(ctx context.Context, n *vm.Node, ns string, count int) error {
	if count == 0 {
		return nil
	}
	if _, err := n.Client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	for i := range count {
		p := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("sleep-%d", i), Namespace: ns},
			Spec: corev1.PodSpec{NodeName: n.Name, HostNetwork: true, AutomountServiceAccountToken: ptr.To(false),
				Containers: []corev1.Container{{Name: "pause", Image: images.PauseName, ImagePullPolicy: corev1.PullNever}}},
		}
		if _, err := n.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return err
		}
	}
	deadline := time.Now().Add(time.Duration(count) * 20 * time.Second) // TCG starts a pod in seconds
	for {
		pods, err := n.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		running := 0
		if err == nil {
			for _, p := range pods.Items {
				if p.Status.Phase == corev1.PodRunning {
					running++
				}
			}
		}
		if running == count {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d sleeping pods Running (last error: %v)", running, count, err)
		}
		time.Sleep(2 * time.Second)
	}
}
