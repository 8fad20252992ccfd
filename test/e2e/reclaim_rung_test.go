package e2e

// Issue 33: the reclaim rung on the real node (cgroup v1). A pod reads a file twice, so its clean cache is
// active and the working set leaves less than the backstop margin above the kubelet's threshold: policy
// reclaim-aware without the rung (and its fixed margin) would evict it there. With the rung the agent
// asks the kernel to reclaim the pod's file pages instead, and nobody is evicted.

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/test/chartinstall"
)

func TestReclaimRungReclaimsTheCacheWhereTheBackstopWouldEvict(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "reclaim-rung")
	createPod(ctx, t, e, withFile(stressPod(ns, "quiet", []string{"mem", "--rate", "0", "--target", "64Mi"}, "64Mi", false)))
	waitRunning(ctx, t, e, ns, "quiet")
	s := startMemSampler(t)
	time.Sleep(time.Second)
	const target = 260 * mib // the working set's available amount: inside the backstop margin, above the kubelet's threshold
	size := podsLimitBytes - podsWorkingSet(t, s) - target - 16*mib
	a := startAgent(t, e, func(c *agent.Config) {
		c.Settings.Policy = policy.ReclaimAware
		c.Settings.Reclaim.KubeletHorizon = 0 // the fixed margin: the backstop acts inside it whatever the trend
		c.Settings.Reclaim.Action.Enabled = true
		// The agent's memory PSI on cgroup v1 is the host's (/proc/pressure/memory). In a make test run of
		// 2026-12-06 it read 6–10 % full during the reader's fill, with 1Mi/s of refaults, and the agent
		// took that for confirmed pressure and evicted quiet and the reader (source not established: the
		// fill's own direct reclaim once the pods cgroup's usage reaches its limit, or other packages
		// beside; the same test alone saw PSI 0). This test is about pressure nothing confirms, the rung's
		// case, so PSI never confirms here (the confirmed path: TestReclaimAwareEvictsAConfirmedThrash).
		c.Settings.Reclaim.PSISomeAvg10, c.Settings.Reclaim.PSIFullAvg10 = 100, 100
	})
	ooms := watchOOM(ctx, t, e, ns)
	mark := kernelMark(t)
	s.reset(0)
	created := time.Now()
	createPod(ctx, t, e, readerPod(ns, size))
	t.Logf("reader: %s", waitPasses(ctx, t, e, ns, "reader", 2))
	time.Sleep(30 * time.Second) // the agent's syncs, many times over
	o := observe(ctx, t, e, ns, created, mark, ooms)
	log, err := os.ReadFile(a.logPath)
	if err != nil {
		t.Fatal(err)
	}
	reclaims := chartinstall.ReclaimLines(string(log))
	t.Logf("file %dMi: %s; %s; reclaims: %s", size/mib, o, s, strings.Join(reclaims, "; "))
	if len(o.agentEvicted)+len(o.kubeletEvicted) != 0 {
		t.Errorf("evictions: %s; want none: the cache was reclaimed", o)
	}
	if o.ooms != 0 || len(o.oomKilled) != 0 {
		t.Errorf("OOM kills: %s", o)
	}
	requireFreed(t, reclaims, "reader")
}

// requireFreed fails t unless a reclaim of pod freed something.
func requireFreed(t *testing.T, reclaims []string, pod string) {
	t.Helper()
	for _, r := range reclaims {
		if strings.Contains(r, pod) && !strings.Contains(r, "freed=0 ") {
			return
		}
	}
	t.Errorf("no reclaim of %s freed anything (agent log: %q)", pod, reclaims)
}
