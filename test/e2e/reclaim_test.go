package e2e

// Real-node tests of policy reclaim-aware (issue 15) on the package node: pods cgroup limited to 2Gi,
// the kubelet's allocatableMemory.available<200Mi with its memcg notifier, the agent at 456Mi (256Mi
// headroom). Each scenario records what docs/benchmarks.md reports: evictions (the agent's and the
// kubelet's), kernel OOM kills, the node's memory PSI, the lowest allocatableMemory.available the
// kubelet's working-set formula gave, and the time from the workload's start to the eviction.

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/internal/policy"
)

const (
	mib = int64(1) << 20
	// agentThreshold is where the agent acts on the package node: the kubelet's 200Mi + 256Mi.
	agentThreshold = 456 * mib
	kubeletThr     = 200 * mib
	// backstop is where reclaim-aware acts on the working set anyway: the kubelet's 200Mi + 128Mi.
	backstop = kubeletThr + 128*mib
)

// withFile gives a stress pod an emptyDir at /data.
func withFile(p *corev1.Pod) *corev1.Pod {
	p.Spec.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
	p.Spec.Tolerations = tolerateAll()
	return p
}

// readerPod reads a sparse file of size bytes at /data/f twice and holds its cache (the cache scenarios'
// page-cache pod, "reader").
func readerPod(ns string, size int64) *corev1.Pod {
	return withFile(stressPod(ns, "reader", []string{"cache", "--path", "/data/f", "--size", fmt.Sprintf("%d", size),
		"--sparse"}, "64Mi", false))
}

// loopReaderPod is readerPod reading its file in a loop instead of twice (stress cache --passes 0): its
// cache stays active, and pages the agent reclaims are read back at the next pass.
func loopReaderPod(ns string, size int64) *corev1.Pod {
	p := readerPod(ns, size)
	p.Spec.Containers[0].Args = append(p.Spec.Containers[0].Args, "--passes", "0")
	return p
}

// outcome is what one scenario run saw.
type outcome struct {
	agentEvicted, kubeletEvicted []string
	ooms                         int
	oomKilled                    []string
	decision                     time.Duration // from the workload's creation to the first eviction (0: none)
}

func (o outcome) String() string {
	d := "none"
	if o.decision > 0 {
		d = o.decision.Round(100 * time.Millisecond).String()
	}
	return fmt.Sprintf("agent evicted %v, kubelet evicted %v, kernel OOM kills %d, OOMKilled %v, creation to first eviction %s",
		o.agentEvicted, o.kubeletEvicted, o.ooms, o.oomKilled, d)
}

// observe collects the evictions of namespace ns since created and the OOM kills since mark.
func observe(ctx context.Context, t *testing.T, e *env, ns string, created time.Time, mark float64, ooms *oomWatch) outcome {
	t.Helper()
	var o outcome
	var first time.Time
	// The agent's evictions: one per request in the audit log (Events merge a repeated one); the time of
	// the first is the API server's receipt of the request.
	for _, r := range evictionRequests(t, e, ns) {
		o.agentEvicted = append(o.agentEvicted, r.Pod)
		if first.IsZero() || r.Received.Before(first) {
			first = r.Received
		}
	}
	for _, ev := range eventsIn(ctx, t, e, ns, "Evicted") {
		if ev.Source.Component == "kubelet" {
			o.kubeletEvicted = append(o.kubeletEvicted, ev.InvolvedObject.Name)
			if et := eventTime(ev); first.IsZero() || et.Before(first) {
				first = et
			}
		}
	}
	if !first.IsZero() {
		o.decision = first.Sub(created)
	}
	o.ooms = kernelOOMKillsSince(t, e, mark)
	o.oomKilled = ooms.list()
	return o
}

func evictedAny(ctx context.Context, t *testing.T, e *env, ns string) bool {
	if len(eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)) > 0 {
		return true
	}
	for _, ev := range eventsIn(ctx, t, e, ns, "Evicted") {
		if ev.Source.Component == "kubelet" {
			return true
		}
	}
	return false
}

func reclaimAware(c *agent.Config) { c.Settings.Policy = policy.ReclaimAware }

// waitPasses waits for the cache pod's two read passes (its log's "pass" lines).
func waitPasses(ctx context.Context, t *testing.T, e *env, ns, name string, n int) string {
	t.Helper()
	var log string
	poll(ctx, t, fmt.Sprintf("pod %s: %d read passes", name, n), func() (bool, string) {
		b, err := e.client.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			return false, err.Error()
		}
		log = string(b)
		return strings.Count(log, `"event":"pass"`) >= n, fmt.Sprintf("%d passes", strings.Count(log, `"event":"pass"`))
	})
	var passes []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `"event":"pass"`) {
			passes = append(passes, l)
		}
	}
	return strings.Join(passes, "; ")
}

// TestReclaimAwareCacheOnly: a pod reads a file (sparse, so its page cache costs no disk I/O) twice, so
// its clean cache is active and the kubelet's working set counts it as used. Baselines in the same run:
// the kubelet alone evicts it when the cache takes the working set past the kubelet's 200Mi; the agent
// with its default policy evicts it when the working set passes the agent's 456Mi. With policy
// reclaim-aware and the same cache: no eviction, no OOM kill, PSI stays low.
func TestReclaimAwareCacheOnly(t *testing.T) {
	e := requireNode(t)
	for _, tc := range []struct {
		name   string
		agent  func(*agent.Config) // nil: no agent
		target int64               // allocatableMemory.available the cache should leave (working set)
		evicts bool
	}{
		{"kubelet alone", nil, 120 * mib, true},
		{"agent policy pressure", func(*agent.Config) {}, 390 * mib, true},
		{"agent policy reclaim-aware", reclaimAware, 390 * mib, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resetNode(t, e)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			ns := createNamespace(ctx, t, e, "reclaim-cache")
			createPod(ctx, t, e, withFile(stressPod(ns, "quiet", []string{"mem", "--rate", "0", "--target", "64Mi"}, "64Mi", false)))
			waitRunning(ctx, t, e, ns, "quiet")
			s := startMemSampler(t)
			time.Sleep(time.Second)
			size := podsLimitBytes - podsWorkingSet(t, s) - tc.target - 16*mib // the reader's own runtime overhead
			if tc.agent != nil {
				startAgent(t, e, tc.agent)
			}
			ooms := watchOOM(ctx, t, e, ns)
			mark := kernelMark(t)
			s.reset(0)
			created := time.Now()
			createPod(ctx, t, e, readerPod(ns, size))
			if tc.evicts {
				poll(ctx, t, "an eviction", func() (bool, string) { return evictedAny(ctx, t, e, ns), s.String() })
				time.Sleep(3 * time.Second) // would anything else go?
			} else {
				t.Logf("reader: %s", waitPasses(ctx, t, e, ns, "reader", 2))
				time.Sleep(30 * time.Second) // the kubelet's and the agent's syncs, many times over
			}
			o := observe(ctx, t, e, ns, created, mark, ooms)
			t.Logf("file %dMi: %s; %s", size/mib, o, s)
			low := s.lowest()
			switch {
			case tc.agent == nil && (len(o.agentEvicted) != 0 || len(o.kubeletEvicted) == 0):
				// The kubelet ranks by its Summary's pod stats, which may not hold the new reader's usage
				// yet: it has evicted the quiet pod first and then the reader (docs/benchmarks.md). The
				// baseline records whom it took; what it must show is that the cache alone made it evict.
				t.Errorf("evictions: %s; want the kubelet to evict (the cache's working set crossed its threshold)", o)
			case tc.agent != nil && tc.evicts && (len(o.agentEvicted)+len(o.kubeletEvicted) != 1):
				t.Errorf("evictions: %s; want exactly one (the reader)", o)
			case !tc.evicts && (len(o.agentEvicted)+len(o.kubeletEvicted) != 0):
				t.Errorf("evictions: %s; want none: the memory is clean page cache", o)
			case !tc.evicts && (low >= agentThreshold || low <= backstop):
				t.Errorf("the working set left %dMi available at its lowest, want between the kubelet's threshold + margin %dMi and the agent's %dMi: "+
					"the scenario did not test the policy", low/mib, backstop/mib, agentThreshold/mib)
			}
			if tc.agent != nil && tc.evicts && (len(o.agentEvicted) != 1 || o.agentEvicted[0] != "reader") {
				t.Errorf("agent evictions %v, want the reader", o.agentEvicted)
			}
			if o.ooms != 0 || len(o.oomKilled) != 0 {
				t.Errorf("OOM kills: %s", o)
			}
		})
	}
}

// TestReclaimAwareEvictsARealHogBeforeTheOOMKiller: next to a pod holding 1Gi of active cache, an
// anonymous ramp at 256 MiB/s: something is evicted before any OOM kill with the default policy (which
// ranks by working set, so it may take the cache holder) and with reclaim-aware, which must take the
// hog and leave the cache holder. The kubelet-alone baseline (opt-in, PRESSURE_BASELINES=1) records what
// the kubelet does by itself: an eviction or an OOM kill, whichever comes first.
func TestReclaimAwareEvictsARealHogBeforeTheOOMKiller(t *testing.T) {
	e := requireNode(t)
	for _, tc := range []struct {
		name     string
		agent    func(*agent.Config) // nil: no agent
		wantHog  bool
		baseline bool
	}{
		{"kubelet alone", nil, false, true},
		{"agent policy pressure", func(*agent.Config) {}, false, false},
		{"agent policy reclaim-aware", reclaimAware, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.baseline {
				requireBaselines(t)
			}
			resetNode(t, e)
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			ns := createNamespace(ctx, t, e, "reclaim-hog")
			createPod(ctx, t, e, withFile(stressPod(ns, "reader", []string{"cache", "--path", "/data/f", "--size", "1Gi", "--sparse"}, "64Mi", false)))
			waitRunning(ctx, t, e, ns, "reader")
			waitPasses(ctx, t, e, ns, "reader", 2)
			s := startMemSampler(t)
			if tc.agent != nil {
				startAgent(t, e, tc.agent)
			}
			ooms := watchOOM(ctx, t, e, ns)
			mark := kernelMark(t)
			s.reset(0)
			created := time.Now()
			hog := stressPod(ns, "hog", []string{"mem", "--rate", "256Mi", "--target", "3Gi"}, "64Mi", false)
			hog.Spec.Tolerations = tolerateAll()
			createPod(ctx, t, e, hog)
			poll(ctx, t, "an eviction or an OOM kill", func() (bool, string) {
				return evictedAny(ctx, t, e, ns) || len(ooms.list()) > 0 || kernelOOMKillsSince(t, e, mark) > 0, s.String()
			})
			time.Sleep(3 * time.Second)
			o := observe(ctx, t, e, ns, created, mark, ooms)
			t.Logf("%s; %s", o, s)
			if tc.agent == nil {
				if len(o.agentEvicted) != 0 {
					t.Errorf("agent evictions %v without an agent", o.agentEvicted)
				}
				return // the baseline: recorded in docs/benchmarks.md, not asserted
			}
			if o.ooms != 0 || len(o.oomKilled) != 0 {
				t.Errorf("OOM kills: %s; want an eviction before any", o)
			}
			if !tc.wantHog {
				// Policy pressure ranks by working set: the reader's active cache may make it the victim
				// (seen on 2026-12-02); recorded, not asserted, as the baseline of docs/benchmarks.md.
				return
			}
			if len(o.agentEvicted) != 1 || o.agentEvicted[0] != "hog" || len(o.kubeletEvicted) != 0 {
				t.Errorf("evictions: %s; want the agent to evict the hog alone", o)
			}
			if p, err := e.client.CoreV1().Pods(ns).Get(ctx, "reader", metav1.GetOptions{}); err != nil || p.DeletionTimestamp != nil {
				t.Errorf("reader: %v, want it running (its cache is reclaimable)", err)
			}
		})
	}
}

// baselinesEnv turns on the baseline contenders of the reclaim scenarios that make test leaves out
// (the kubelet alone, policy pressure on the thrash): measurements for docs/benchmarks.md that cost
// minutes each on the one shared test node.
const baselinesEnv = "PRESSURE_BASELINES"

// requireBaselines skips a baseline run unless PRESSURE_BASELINES=1: an opt-in measurement, not a
// missing prerequisite, so it skips under CI too.
func requireBaselines(t *testing.T) {
	t.Helper()
	if os.Getenv(baselinesEnv) != "1" {
		t.Skipf("baseline measurement for docs/benchmarks.md: run with %s=1", baselinesEnv)
	}
}
