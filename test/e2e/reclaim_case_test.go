package e2e

// One run of issue 33's page-cache case on the package node, for any contender: a pod reads a file
// twice (its clean cache active, so the kubelet's working set counts it) to leave target bytes of the
// working set's available amount, and holds it; then an anonymous hog starts beside it. The chart test
// asserts on one contender's run; the reclaim benchmark tabulates every contender's.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/test/chartinstall"
)

// reclaimContender is how the node is set up for a run: the kubelet alone (no chart) or the chart with
// the node's values (chartinstall.ForTest.Defaults) and set; rung marks the reclaim rung's setting.
type reclaimContender struct {
	name  string
	chart bool
	rung  bool
	set   []string
}

// rungValues turn the reclaim rung on: uid 0 with the pods cgroup of the memory controller writable.
func rungValues() []string {
	return []string{"agent.reclaim.enabled=true", "agent.reclaim.podsCgroup=memory/" + chartinstall.PodsCgroup}
}

// reclaimRun is what one run saw: during the hold and after the hog started.
type reclaimRun struct {
	contender, scenario string
	fileMi              int64
	held                time.Duration // how long the reader held its cache before the first eviction (or the whole hold)
	hold, withHog       outcome
	lowestHold          int64 // the lowest working-set available amount while the reader held, bytes
	reclaims            []string
	readerAlive         bool
	hogEvict            string // the agent's evict line of the hog, "" when none
}

// runReclaimCase runs the case once for contender c: the reader leaves sc.target available (the kubelet's
// working-set formula) and holds for hold (reading in a loop with sc.loop), or until the first eviction;
// then the hog runs until an eviction or an OOM kill.
func runReclaimCase(t *testing.T, e *env, c reclaimContender, sc reclaimScenario, hold time.Duration) reclaimRun {
	t.Helper()
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), hold+8*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "reclaim-chart")
	s := startMemSampler(t)
	var a *chartinstall.Agent
	if c.chart {
		a = chartinstall.ForTest{Name: chartRelease, Namespace: chartNamespace, Tag: chartTag, Node: e.node,
			ControlPlane: e.cp, Client: e.client, Defaults: true, Janitor: true}.Install(t, c.set...)
		if c.rung {
			requireOnlyThePodsCgroupWritable(t, a)
		}
		time.Sleep(time.Second)
	}
	r := reclaimRun{contender: c.name, scenario: sc.name}
	size := podsLimitBytes - podsWorkingSet(t, s) - sc.target - 16*mib
	if sc.file > 0 {
		size = sc.file
	}
	r.fileMi = size / mib
	ooms := watchOOM(ctx, t, e, ns)
	mark := kernelMark(t)
	s.reset(0)
	created := time.Now()
	reader := readerPod(ns, size)
	if sc.loop {
		reader = loopReaderPod(ns, size)
	}
	createPod(ctx, t, e, reader)
	if !waitPassesOrEviction(ctx, t, e, ns, "reader", 2) {
		t.Logf("%s, %s: an eviction before the reader's second pass", c.name, sc.name)
	}
	start := time.Now()
	for time.Since(start) < hold && !evictedAny(ctx, t, e, ns) {
		time.Sleep(5 * time.Second)
	}
	r.held = time.Since(start).Round(time.Second)
	r.hold = observe(ctx, t, e, ns, created, mark, ooms)
	r.lowestHold = s.lowest()
	t.Logf("%s, %s: held %s of %s, file %dMi: %s; %s", c.name, sc.name, r.held, hold, r.fileMi, r.hold, s)

	hog := stressPod(ns, "hog", []string{"mem", "--rate", "256Mi", "--target", "3Gi"}, "64Mi", false)
	hog.Spec.Tolerations = tolerateAll()
	createPod(ctx, t, e, hog)
	poll(ctx, t, "an eviction of the hog or an OOM kill", func() (bool, string) {
		o := observe(ctx, t, e, ns, created, mark, ooms)
		return len(o.agentEvicted)+len(o.kubeletEvicted) > len(r.hold.agentEvicted)+len(r.hold.kubeletEvicted) ||
			o.ooms > 0 || len(o.oomKilled) > 0, s.String()
	})
	time.Sleep(3 * time.Second)
	r.withHog = observe(ctx, t, e, ns, created, mark, ooms)
	t.Logf("%s, %s: with the hog: %s; %s", c.name, sc.name, r.withHog, s)
	p, err := e.client.CoreV1().Pods(ns).Get(ctx, "reader", metav1.GetOptions{})
	r.readerAlive = err == nil && p.DeletionTimestamp == nil && p.Status.Reason != "Evicted"
	if a != nil {
		log, err := a.Log(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r.reclaims = chartinstall.ReclaimLines(log)
		t.Logf("%d reclaims: %v", len(r.reclaims), r.reclaims)
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, `"msg":"evict"`) {
				t.Logf("agent: %s", l)
				if strings.Contains(l, `/hog"`) {
					r.hogEvict = l
				}
			}
		}
	}
	return r
}

// waitPassesOrEviction waits for the reader's n read passes and reports true, or returns false at the
// first eviction in ns (the pod's log may be gone then).
func waitPassesOrEviction(ctx context.Context, t *testing.T, e *env, ns, name string, n int) bool {
	t.Helper()
	passed := false
	poll(ctx, t, fmt.Sprintf("pod %s: %d read passes or an eviction", name, n), func() (bool, string) {
		if evictedAny(ctx, t, e, ns) {
			return true, "evicted"
		}
		b, err := e.client.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			return false, err.Error()
		}
		c := strings.Count(string(b), `"event":"pass"`)
		passed = c >= n
		return passed, fmt.Sprintf("%d passes", c)
	})
	return passed
}
