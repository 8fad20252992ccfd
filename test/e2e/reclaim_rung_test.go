package e2e

// Issue 33: the reclaim rung on the real node (cgroup v1). A pod reads a file twice, so its clean cache is
// active and the working set leaves less than the backstop margin above the kubelet's threshold: policy
// reclaim-aware without the rung (and its fixed margin) would evict it there. With the rung the agent
// asks the kernel to reclaim the pod's file pages instead, and nobody is evicted.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/internal/policy"
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
	})
	ooms := watchOOM(ctx, t, e, ns)
	mark := kernelMark(t)
	s.reset(0)
	created := time.Now()
	createPod(ctx, t, e, withFile(stressPod(ns, "reader", []string{"cache", "--path", "/data/f", "--size",
		fmt.Sprintf("%d", size), "--sparse"}, "64Mi", false)))
	t.Logf("reader: %s", waitPasses(ctx, t, e, ns, "reader", 2))
	time.Sleep(30 * time.Second) // the agent's syncs, many times over
	o := observe(ctx, t, e, ns, created, mark, ooms)
	reclaims := reclaimLines(t, a.logPath)
	t.Logf("file %dMi: %s; %s; reclaims: %s", size/mib, o, s, strings.Join(reclaims, "; "))
	if len(o.agentEvicted)+len(o.kubeletEvicted) != 0 {
		t.Errorf("evictions: %s; want none: the cache was reclaimed", o)
	}
	if o.ooms != 0 || len(o.oomKilled) != 0 {
		t.Errorf("OOM kills: %s", o)
	}
	freed := false
	for _, r := range reclaims {
		freed = freed || strings.Contains(r, "reader") && !strings.Contains(r, "freed=0 ")
	}
	if !freed {
		t.Errorf("no reclaim of the reader freed anything (agent log: %q)", reclaims)
	}
}

// reclaimLines returns the agent log's reclaim lines as "target asked=N freed=N err=E".
func reclaimLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		var r struct {
			Msg, Target, Err string
			Asked, Freed     int64
		}
		if json.Unmarshal([]byte(l), &r) != nil || r.Msg != "reclaim" {
			continue
		}
		out = append(out, fmt.Sprintf("%s asked=%dMi freed=%d err=%s", r.Target, r.Asked>>20, r.Freed, r.Err))
	}
	return out
}
