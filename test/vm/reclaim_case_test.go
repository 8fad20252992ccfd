package vm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/vm"
)

// Issue 33 on cgroup v2: a pod reads a file on the node's disk twice and holds its active page cache
// 260Mi above what the working set may reach before the kubelet's allocatableMemory.available threshold
// is met (as the v1 node's chart tests); then an anonymous hog starts beside it.

// cacheNS is the cache case's namespace on the guest node.
const cacheNS = "cache"

// cacheHold is how long the reader holds its cache in make test (the v1 node's chart tests hold 30 s).
const cacheHold = 30 * time.Second

// Policy reclaim-aware without the reclaim rung (the chart's defaults but the policy): the kubelet counts
// the cache as used, the agent as reclaimable, and the working set is steady, so the backstop leaves it
// alone: nobody is evicted while it holds. The agent evicts the hog, and only it, with no kernel OOM kill.
func TestKubeletOnCgroupV2ReclaimAwareKeepsThePageCachePodAndEvictsTheHog(t *testing.T) {
	r, _ := runCacheCase(t, nil, "agent.config.policy=reclaim-aware")
	requireReaderKeptAndHogEvicted(t, r)
}

// The reclaim rung on cgroup v2 (memory.reclaim; containerd 2 in the guest, which the chart's recursive
// read-only mounts need), with kubeletHorizon 0 (a test fact, as on the v1 node: the backstop's fixed
// margin, so it would act on the held cache whatever its trend): the agent reclaims the reader's cache
// instead of evicting it, and evicts the hog alone when it comes, with no kernel OOM kill.
func TestKubeletOnCgroupV2ReclaimRungKeepsThePageCachePodAndEvictsTheHog(t *testing.T) {
	c := clustertest.Containerd2(t)
	r, agent := runCacheCase(t, c, "agent.config.policy=reclaim-aware", "agent.config.reclaim.kubeletHorizon=0s",
		"agent.reclaim.enabled=true", "agent.reclaim.podsCgroup=kubepods")
	requireReaderKeptAndHogEvicted(t, r)
	reclaims := reclaimLines(agent)
	t.Logf("%d reclaims: %v", len(reclaims), reclaims)
	for _, l := range reclaims {
		if strings.Contains(l, "reader") && !strings.Contains(l, "freed=0 ") {
			return
		}
	}
	t.Errorf("no reclaim of the reader freed anything; want the rung to have reclaimed its cache")
}

// runCacheCase boots a race node with a scratch disk and the pod network (containerd 2 when c is set),
// installs the chart with set, runs vm.Node.CacheCase and returns its result and the agent's log lines.
func runCacheCase(t *testing.T, c *cluster.Containerd2, set ...string) (vm.CacheResult, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	p := startParts(ctx, t)
	chart := buildChartParts(ctx, t)
	opt := raceNode(t.TempDir(), "")
	opt.PodNetwork, opt.DiskMiB, opt.Containerd2 = true, 1024, c
	opt.TailPodLogs = []string{cacheNS + "/" + vm.ReaderContainer}
	opt.Images = append(slices.Clone(p.images), chart.images...)
	n := p.startNode(ctx, t, opt)
	chart.installForTest(ctx, t, p, n, set...)
	waitLine(ctx, t, n, `"msg":"pressure-agent started"`)
	node, err := n.Client.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The pods cgroup's capacity as the kubelet's allocatableMemory.available sees it: the node's
	// allocatable plus the kubelet's hard threshold (100Mi, the guest kubelet's default).
	capacity := node.Status.Allocatable.Memory().Value() + 100<<20
	used := n.PodsCurrent()
	file := capacity - used - 260<<20 - 16<<20
	t.Logf("pods cgroup capacity %dMi, in use %dMi: the reader's file %dMi", capacity>>20, used>>20, file>>20)
	r, err := n.CacheCase(ctx, cacheNS, file, cacheHold, 4*time.Minute)
	t.Logf("cache case: %s", r)
	var agent []string
	for _, l := range n.Guest.OutputLines("") {
		if i := strings.Index(l, `{"time":`); i >= 0 && strings.Contains(l, `"msg":"`) {
			agent = append(agent, l[i:])
			if strings.Contains(l, `"msg":"evict"`) {
				t.Logf("agent: %s", l[i:])
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return r, agent
}

// requireReaderKeptAndHogEvicted: nothing evicted and no OOM kill while the reader held its cache; then
// the hog alone evicted, by the agent, with no OOM kill, and the reader still running.
func requireReaderKeptAndHogEvicted(t *testing.T, r vm.CacheResult) {
	t.Helper()
	if len(r.HoldEvicted) != 0 || r.HoldOOMKills != 0 {
		t.Errorf("while the reader held its cache: evicted %v, OOM kills %d; want neither (its cache is reclaimable)",
			r.HoldEvicted, r.HoldOOMKills)
	}
	if r.OOMKills != 0 {
		t.Errorf("kernel OOM kills in the pods cgroup: %d; want the hog evicted before any", r.OOMKills)
	}
	if strings.Join(r.Evicted, ",") != "agent:hog" {
		t.Errorf("evictions %v; want the agent to evict the hog alone", r.Evicted)
	}
	if !r.ReaderAlive {
		t.Errorf("the reader is not running at the end; want it kept (its cache is reclaimable)")
	}
}

// reclaimLines are the agent's reclaim lines as "target asked=NMi freed=N err=E".
func reclaimLines(agent []string) []string {
	var out []string
	for _, l := range agent {
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
