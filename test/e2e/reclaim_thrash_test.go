package e2e

// Issue 15's third real-node scenario, in two shapes. A pod whose file-backed working set is larger than
// the pods cgroup thrashes next to a quiet pod: a sequential loop, whose refaults the kernel never
// activates (policy reclaim-aware evicts it on its estimate alone), and random reads after a warm-up,
// whose refaults it does activate, so the working set rises and PSI confirms the pressure (the confirmed
// path). The kubelet alone and policy pressure run the same scenarios as opt-in baselines.

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/threshold"
	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// thrashFile is the sequential thrasher's file: half as large again as the pods cgroup's 2Gi, so a loop
// over it refaults every page it reads (each page is evicted before the loop comes back to it).
const thrashFile = "3Gi"

// thrashDecision is how long the agent may take from the thrasher's creation to its eviction: start-up
// (a sparse file costs no writing), a pass filling the cgroup, the refault rate's first window. It is
// also how long a baseline that evicts nothing is watched.
const thrashDecision = 90 * time.Second

// requireDiskBackedRoot skips (fails under CI) when the kubelet's root directory, which holds the
// emptyDir of the thrasher's file, is on tmpfs: there its pages would be shmem, not reclaimable page
// cache, and the scenario would end in the OOM killer instead of thrashing.
func requireDiskBackedRoot(t *testing.T, e *env) {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(e.node.KubeletRootDir(), &st); err != nil {
		t.Fatalf("statfs %s: %v", e.node.KubeletRootDir(), err)
	}
	if st.Type == unix.TMPFS_MAGIC {
		clustertest.SkipOrFail(t, "the kubelet root dir %s is on tmpfs: a file there is shmem, not page cache that can thrash", e.node.KubeletRootDir())
	}
}

// contender is who acts on the node in a run: the kubelet alone (agent and chart nil), the agent in the
// test process with a policy, or the chart-installed agent with the node's values and chart.
type contender struct {
	name     string
	agent    func(*agent.Config)
	baseline bool // opt-in (PRESSURE_BASELINES=1)
	chart    []string
}

// thrashRun is what one thrash run saw.
type thrashRun struct {
	o        outcome
	s        *memSampler
	log      []byte // the thrasher's log as last read: an evicted pod is deleted, and its log with it
	agent    *agentRun
	created  time.Time
	evicted  bool
	quietRan bool // the quiet pod still running, not terminating, at the end
}

// runThrash starts the quiet pod, the contender and the thrasher (stress args), then waits up to wait
// for an eviction (and 3 s more: would anything else go?), or watches that long for none. level is the
// available amount whose first crossing by the working set the sampler records.
func runThrash(t *testing.T, e *env, c contender, args []string, level int64, wait time.Duration) thrashRun {
	t.Helper()
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "reclaim-thrash")
	createPod(ctx, t, e, withFile(stressPod(ns, "quiet", []string{"mem", "--rate", "0", "--target", "64Mi"}, "64Mi", false)))
	waitRunning(ctx, t, e, ns, "quiet")
	r := thrashRun{s: startMemSampler(t)}
	if c.agent != nil {
		r.agent = startAgent(t, e, c.agent)
	}
	var chart *chartinstall.Agent
	if c.chart != nil {
		chart = chartinstall.ForTest{Name: chartRelease, Namespace: chartNamespace, Tag: chartTag, Node: e.node,
			ControlPlane: e.cp, Client: e.client, Defaults: true}.Install(t, c.chart...)
		requireOnlyThePodsCgroupWritable(t, chart)
	}
	ooms := watchOOM(ctx, t, e, ns)
	mark := kernelMark(t)
	r.s.reset(level)
	r.created = time.Now()
	createPod(ctx, t, e, withFile(stressPod(ns, "thrash", append([]string{"thrash", "--path", "/data/f"}, args...), "64Mi", false)))
	dctx, dcancel := context.WithTimeout(ctx, wait)
	defer dcancel()
	for dctx.Err() == nil && !r.evicted {
		// Keep the last log that is the thrasher's own: once its container is gone, the kubelet answers
		// "unable to retrieve container logs".
		if b, err := e.client.CoreV1().Pods(ns).GetLogs("thrash", &corev1.PodLogOptions{}).DoRaw(ctx); err == nil &&
			bytes.Contains(b, []byte(`"event":`)) {
			r.log = b
		}
		r.evicted = evictedAny(ctx, t, e, ns)
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	r.o = observe(ctx, t, e, ns, r.created, mark, ooms)
	p, err := e.client.CoreV1().Pods(ns).Get(ctx, "quiet", metav1.GetOptions{})
	r.quietRan = err == nil && p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning
	t.Logf("thrash %v (%s), watched %s: %s; %s", args, c.name, wait, r.o, r.s)
	t.Logf("thrasher: %s", thrashPasses(t, r.log))
	if r.agent != nil {
		for _, l := range r.agent.logLines(`"msg":"evict"`) {
			t.Logf("agent: %.900s", l)
		}
	}
	if chart != nil {
		log, err := chart.Log(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(log, "\n") {
			if strings.Contains(l, `"msg":"evict"`) || strings.Contains(l, `"msg":"reclaim"`) {
				t.Logf("chart agent: %.900s", l)
			}
		}
	}
	return r
}

// checkNoEviction is a baseline's expectation: nobody evicts (the working set stays above the kubelet's
// and the agent's thresholds), no OOM kill, the quiet pod runs.
func checkNoEviction(t *testing.T, r thrashRun) {
	t.Helper()
	if r.evicted || len(r.o.agentEvicted)+len(r.o.kubeletEvicted) != 0 {
		t.Errorf("evictions: %s; want none: the working set stays above the thresholds", r.o)
	}
	checkNoOOM(t, r)
}

func checkNoOOM(t *testing.T, r thrashRun) {
	t.Helper()
	if r.o.ooms != 0 || len(r.o.oomKilled) != 0 {
		t.Errorf("OOM kills: %s; want none (file pages are reclaimable, however often they refault)", r.o)
	}
	if !r.quietRan {
		t.Errorf("the quiet pod is not running at the end, want it running")
	}
}

// checkThrasherAlone: the agent evicted the thrasher and nothing else, and the kubelet nothing.
func checkThrasherAlone(t *testing.T, r thrashRun) {
	t.Helper()
	if len(r.o.agentEvicted) != 1 || r.o.agentEvicted[0] != "thrash" || len(r.o.kubeletEvicted) != 0 {
		t.Errorf("evictions: %s; want the agent to evict the thrasher alone", r.o)
	}
	checkNoOOM(t, r)
}

// checkFirstEvicted: the agent's first eviction (its log's order) is of pod name, and no OOM kill; what
// else it evicted is recorded, not asserted (a baseline).
func checkFirstEvicted(t *testing.T, r thrashRun, name string) {
	t.Helper()
	lines := r.agent.logLines(`"msg":"evict"`)
	if len(lines) == 0 || !strings.Contains(lines[0], `/`+name+`"`) {
		t.Errorf("agent eviction lines %q, want the first to be of %s", lines, name)
	}
	if r.o.ooms != 0 || len(r.o.oomKilled) != 0 {
		t.Errorf("OOM kills: %s; want none", r.o)
	}
}

// TestReclaimAwareEvictsTheThrasher: next to a quiet pod, a pod maps a sparse 3Gi file (no disk I/O)
// and reads a byte of every page in a loop. Inside the 2Gi pods cgroup every page it reads was evicted
// since its last pass: the kernel refaults gigabytes a second, and because the loop's refault distance
// is larger than the cgroup, it does not activate the pages: they stay on the inactive list, so the
// kubelet's working set stays low and neither the kubelet nor policy pressure sees any pressure (the
// baselines, opt-in: they must evict nothing). Policy reclaim-aware counts refaulted cache as not
// reclaimable and must evict the thrasher, not the quiet pod, without an OOM kill and without the
// kubelet evicting.
func TestReclaimAwareEvictsTheThrasher(t *testing.T) {
	e := requireNode(t)
	requireDiskBackedRoot(t, e)
	for _, c := range []contender{
		{"kubelet alone", nil, true, nil},
		{"agent policy pressure", func(*agent.Config) {}, true, nil},
		{"agent policy reclaim-aware", reclaimAware, false, nil},
		// Issue 33: with the reclaim rung the thrasher is still evicted, not reclaimed (the rung passes a
		// thrashing pod over).
		{"chart agent reclaim-aware + rung", nil, false, append(rungValues(), "agent.config.policy=reclaim-aware")},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.baseline {
				requireBaselines(t)
			}
			r := runThrash(t, e, c, []string{"--size", thrashFile, "--sparse"}, agentThreshold, thrashDecision)
			if c.baseline {
				checkNoEviction(t, r)
				return
			}
			checkThrasherAlone(t, r)
			if low := r.s.lowest(); low <= agentThreshold {
				t.Errorf("the working set left %dMi available at its lowest, want above the agent's threshold %dMi: the pages were "+
					"activated, so the eviction need not be the refault estimate's", low/mib, agentThreshold/mib)
			}
		})
	}
}

// thrashPasses summarises the thrasher's log: how many passes over the file it made, and the last one.
// No pass means the pod never read its mapping: the scenario did not test the policy.
func thrashPasses(t *testing.T, log []byte) string {
	t.Helper()
	var passes []string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, `"event":"pass"`) || strings.Contains(l, `"event":"warm"`) {
			passes = append(passes, l)
		}
	}
	if len(passes) == 0 {
		t.Errorf("the thrasher logged no pass over its file before the end; its log:\n%s", log)
		return "no pass"
	}
	return fmt.Sprintf("%d passes (warm-ups included), the last %s", len(passes), passes[len(passes)-1])
}

// withHeadroom returns mutate followed by an allocatableMemory.available headroom of q.
func withHeadroom(q string, mutate func(*agent.Config)) func(*agent.Config) {
	return func(c *agent.Config) {
		mutate(c)
		v := resource.MustParse(q)
		c.Settings.Headroom[signal.AllocatableMemoryAvailable] = threshold.Value{Quantity: &v}
	}
}
