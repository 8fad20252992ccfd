package vm_test

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/test/chartinstall"
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
	r, _ := runCacheCase(t, cacheRun{chart: true, set: []string{"agent.config.policy=reclaim-aware"}})
	requireReaderKeptAndHogEvicted(t, r)
}

// The reclaim rung on cgroup v2 (memory.reclaim; containerd 2 in the guest, which the chart's recursive
// read-only mounts need), with kubeletHorizon 0 (a test fact, as on the v1 node: the backstop's fixed
// margin, so it would act on the held cache whatever its trend): the agent reclaims the reader's cache
// instead of evicting it, and evicts the hog alone when it comes, with no kernel OOM kill.
func TestKubeletOnCgroupV2ReclaimRungKeepsThePageCachePodAndEvictsTheHog(t *testing.T) {
	r, agent := runCacheCase(t, cacheRun{containerd2: clustertest.Containerd2(t), chart: true,
		set: append(rungValues(), "agent.config.reclaim.kubeletHorizon=0s")})
	requireReaderKeptAndHogEvicted(t, r)
	reclaims := chartinstall.ReclaimLines(strings.Join(agent, "\n"))
	t.Logf("%d reclaims: %v", len(reclaims), reclaims)
	for _, l := range reclaims {
		if strings.Contains(l, "reader") && !strings.Contains(l, "freed=0 ") {
			return
		}
	}
	t.Errorf("no reclaim of the reader freed anything; want the rung to have reclaimed its cache")
}

// rungValues are the chart's reclaim rung on the guest node (cgroupfs driver: the pods cgroup is
// kubepods) under policy reclaim-aware.
func rungValues() []string {
	return []string{"agent.config.policy=reclaim-aware", "agent.reclaim.enabled=true", "agent.reclaim.podsCgroup=kubepods"}
}

// killRungValues are rungValues with the cgroup-kill rung (contender Rk).
func killRungValues() []string { return append(rungValues(), "agent.cgroupKill.enabled=true") }

// cacheRun is how a cache case runs: the node's containerd (the host's 1.6 when nil), the chart with set
// or the kubelet alone, a reader that holds its cache or reads it in a loop.
type cacheRun struct {
	containerd2 *cluster.Containerd2
	chart, loop bool
	set         []string
	hold        time.Duration // the reader's hold before the hog starts; 0 is cacheHold
}

// cacheNode boots a race node with a scratch disk of diskMiB, the pod network and the reader's log tail
// (containerd 2 when c.containerd2 is set) and installs the chart with c.set when c.chart.
func cacheNode(ctx context.Context, t *testing.T, c cacheRun, diskMiB int) *vm.Node {
	t.Helper()
	p := startParts(ctx, t)
	parts := buildChartParts(ctx, t)
	opt := raceNode(t.TempDir(), "")
	opt.PodNetwork, opt.DiskMiB, opt.Containerd2 = true, diskMiB, c.containerd2
	opt.TailPodLogs = []string{cacheNS + "/" + vm.ReaderContainer}
	opt.Images = append(slices.Clone(p.images), parts.images...)
	n := p.startNode(ctx, t, opt)
	if c.chart {
		parts.installLogged(ctx, t, p, n, c.set...)
		waitLine(ctx, t, n, `"msg":"pressure-agent started"`)
	}
	return n
}

// The reader reads its file in a loop, with the rung and the cgroup-kill rung (as on the v1 node): it
// reads back every page the rung reclaims, so the backstop without the rung holds most of the time; the
// hog's anonymous growth beside it is growth, not pages read back, and the agent evicts the hog alone.
func TestKubeletOnCgroupV2ReclaimRungKeepsALoopingReaderAndEvictsTheHog(t *testing.T) {
	r, agent := runCacheCase(t, cacheRun{containerd2: clustertest.Containerd2(t), chart: true, loop: true,
		set: killRungValues()})
	requireReaderKeptAndHogEvicted(t, r)
	t.Logf("reclaims: %v", chartinstall.ReclaimLines(strings.Join(agent, "\n")))
}

// The thrash case with the rung: a pod reads a sparse file half as large again as the pods cgroup in a
// loop beside a quiet pod; every page it reads was evicted since its last pass, so its refaulted cache is
// not reclaimable and the rung passes it over: the agent evicts the thrasher alone, with no kernel OOM
// kill, and the quiet pod runs on.
func TestKubeletOnCgroupV2ReclaimRungEvictsTheThrasher(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	n := cacheNode(ctx, t, cacheRun{containerd2: clustertest.Containerd2(t), chart: true, set: rungValues()}, 2048)
	r, err := n.ThrashCase(ctx, "thrash", 1536<<20, 3*time.Minute)
	t.Logf("thrash case: %s", r)
	agent := agentLines(t, n)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(r.Evicted, ",") != "agent:thrash" {
		t.Errorf("evictions %v; want the agent to evict the thrasher alone; the agent's last lines:\n%s",
			r.Evicted, strings.Join(agent[max(0, len(agent)-15):], "\n"))
	}
	if r.OOMKills != 0 {
		t.Errorf("kernel OOM kills in the pods cgroup: %d; want none (file pages are reclaimable, however often they refault)", r.OOMKills)
	}
	if !r.QuietAlive {
		t.Errorf("the quiet pod is not running at the end; want it running")
	}
}

// runCacheCase runs vm.Node.CacheCase on a cacheNode and returns its result and the agent's log lines.
func runCacheCase(t *testing.T, c cacheRun) (vm.CacheResult, []string) {
	t.Helper()
	hold := cmp.Or(c.hold, cacheHold)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute+hold)
	defer cancel()
	n := cacheNode(ctx, t, c, 1024)
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
	r, err := n.CacheCase(ctx, cacheNS, file, c.loop, hold, 4*time.Minute)
	t.Logf("cache case: %s", r)
	agent := agentLines(t, n)
	if err != nil {
		t.Fatal(err)
	}
	return r, agent
}

// agentLines are the chart agent's log lines on the node's output (JSON); its evict lines are logged.
func agentLines(t *testing.T, n *vm.Node) []string {
	t.Helper()
	var agent []string
	for _, l := range n.Guest.OutputLines("") {
		if i := strings.Index(l, `{"time":`); i >= 0 && strings.Contains(l, `"msg":"`) {
			agent = append(agent, l[i:])
			if strings.Contains(l, `"msg":"evict"`) {
				t.Logf("agent: %s", l[i:])
			}
		}
	}
	return agent
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
