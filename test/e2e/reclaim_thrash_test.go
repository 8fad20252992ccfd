package e2e

// Issue 15's third real-node scenario: a pod whose file-backed working set is larger than the pods
// cgroup thrashes, and policy reclaim-aware evicts it, not its quiet neighbour.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// thrashFile is the thrasher's file: half as large again as the pods cgroup's 2Gi, so a loop over it
// refaults every page it reads (each page is evicted before the loop comes back to it).
const thrashFile = "3Gi"

// thrashDecision is how long the agent may take from the thrasher's creation to its eviction: start-up
// (a sparse file costs no writing), a pass filling the cgroup, the refault rate's first window.
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

// TestReclaimAwareEvictsTheThrasher: next to a quiet pod, a pod maps a sparse 3Gi file (no disk I/O)
// and reads a byte of every page in a loop. Inside the 2Gi pods cgroup every page it reads was evicted
// since its last pass: the kernel refaults gigabytes a second, and because the loop's refault distance
// is larger than the cgroup, it does not activate the pages: they stay on the inactive list, so the
// kubelet's working set stays low and neither the kubelet nor policy pressure sees any pressure. Policy
// reclaim-aware counts refaulted cache as not reclaimable and must evict the thrasher, not the quiet
// pod, without an OOM kill and without the kubelet evicting.
func TestReclaimAwareEvictsTheThrasher(t *testing.T) {
	e := requireNode(t)
	requireDiskBackedRoot(t, e)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "reclaim-thrash")
	createPod(ctx, t, e, withFile(stressPod(ns, "quiet", []string{"mem", "--rate", "0", "--target", "64Mi"}, "64Mi", false)))
	waitRunning(ctx, t, e, ns, "quiet")
	s := startMemSampler(t)
	a := startAgent(t, e, reclaimAware)
	ooms := watchOOM(ctx, t, e, ns)
	mark := kernelMark(t)
	s.reset()
	created := time.Now()
	createPod(ctx, t, e, withFile(stressPod(ns, "thrash", []string{"thrash", "--path", "/data/f", "--size", thrashFile, "--sparse"}, "64Mi", false)))
	dctx, dcancel := context.WithTimeout(ctx, thrashDecision)
	defer dcancel()
	var log []byte // the thrasher's log as last read: an evicted pod is deleted, and its log with it
	poll(dctx, t, "an eviction", func() (bool, string) {
		if b, err := e.client.CoreV1().Pods(ns).GetLogs("thrash", &corev1.PodLogOptions{}).DoRaw(ctx); err == nil {
			log = b
		}
		return evictedAny(ctx, t, e, ns), s.String()
	})
	time.Sleep(3 * time.Second) // would anything else go?
	o := observe(ctx, t, e, ns, created, mark, ooms)
	t.Logf("file %s sparse: %s; %s", thrashFile, o, s)
	t.Logf("thrasher: %s", thrashPasses(t, log))
	for _, l := range a.logLines(`"msg":"evict"`) {
		t.Logf("agent: %.600s", l)
	}
	if len(o.agentEvicted) != 1 || o.agentEvicted[0] != "thrash" || len(o.kubeletEvicted) != 0 {
		t.Errorf("evictions: %s; want the agent to evict the thrasher alone", o)
	}
	if low := s.lowest(); low <= agentThreshold {
		t.Errorf("the working set left %dMi available at its lowest, want above the agent's threshold %dMi: the pages were "+
			"activated, so the eviction need not be the refault estimate's", low/mib, agentThreshold/mib)
	}
	if o.ooms != 0 || len(o.oomKilled) != 0 {
		t.Errorf("OOM kills: %s; want none (file pages are reclaimable, however often they refault)", o)
	}
	if p, err := e.client.CoreV1().Pods(ns).Get(ctx, "quiet", metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil ||
		p.Status.Phase != corev1.PodRunning {
		t.Errorf("quiet pod: %v, want it running", err)
	}
}

// thrashPasses summarises the thrasher's log: how many passes over the file it made, and the last one.
// No pass means the pod never read its mapping: the scenario did not test the policy.
func thrashPasses(t *testing.T, log []byte) string {
	t.Helper()
	var passes []string
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, `"event":"pass"`) {
			passes = append(passes, l)
		}
	}
	if len(passes) == 0 {
		t.Errorf("the thrasher logged no pass over its file before the eviction; its log:\n%s", log)
		return "no pass"
	}
	return fmt.Sprintf("%d passes, the last %s", len(passes), passes[len(passes)-1])
}
