package e2e

// End-to-end tests of pressure-agent (issue 6 scenarios) on the package's real node: pods cgroup limited
// to 2Gi, the kubelet's allocatableMemory.available<200Mi with its memcg notifier on. The agent acts
// 256Mi earlier (headroom), at 456Mi available.

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/test/chartinstall"
)

// Scenario 1: a stress pod ramps next to a Burstable pod over its request and a Guaranteed pod; the agent
// evicts the stress pod, and only it, via the Eviction API, before the kubelet's threshold and with no
// kernel OOM kill.
func TestAgentEvictsStressPodBeforeKubeletAndOOMKiller(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	// Installed once for the three rates, as users deploy it; the last rung on
	// (agent.cgroupKill.enabled): at 1 GiB/s the OOM kill is closer than an eviction can complete.
	a := installAgent(t, e, "agent.cgroupKill.enabled=true")
	for _, rate := range []string{"64Mi", "256Mi", "1024Mi"} {
		t.Run("rate "+rate+"/s", func(t *testing.T) { testStressRamp(t, e, a, rate) })
	}
}

func testStressRamp(t *testing.T, e *env, a *chartinstall.Agent, rate string) {
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "agent-ramp")
	createPod(ctx, t, e, stressPod(ns, "burst", []string{"mem", "--rate", "0", "--target", "200Mi"}, "64Mi", false))
	createPod(ctx, t, e, stressPod(ns, "guar", []string{"mem", "--rate", "0", "--target", "64Mi"}, "128Mi", true))
	waitRunning(ctx, t, e, ns, "burst", "guar")
	time.Sleep(2 * time.Second) // let both reach their targets
	ooms := watchOOM(ctx, t, e, ns)
	mark := kernelMark(t)
	start := time.Now()
	createPod(ctx, t, e, stressPod(ns, "stress", []string{"mem", "--rate", rate, "--target", "3Gi"}, "", false))
	var ours []corev1.Event
	poll(ctx, t, "stress pod evicted by the agent", func() (bool, string) {
		ours = eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
		return len(ours) > 0, fmt.Sprintf("%d events", len(ours))
	})
	// Issue 12: unrelated pods created right after the eviction are not kept off the node for a
	// cooldown (they do not tolerate the agent's taint, which lasts only while the pressure does).
	evicted := time.Now()
	var unrelated []string
	for i := range 3 {
		p := stressPod(ns, fmt.Sprintf("unrelated-%d", i), []string{"sleep"}, "", false)
		createPod(ctx, t, e, p)
		unrelated = append(unrelated, p.Name)
	}
	poll(ctx, t, "stress pod gone", func() (bool, string) {
		_, err := e.client.CoreV1().Pods(ns).Get(ctx, "stress", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	t.Logf("stress pod evicted and gone %s after creation", time.Since(start).Round(time.Millisecond))
	time.Sleep(3 * time.Second) // would anything else go?
	ours = eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
	if len(ours) != 1 || ours[0].InvolvedObject.Name != "stress" || !strings.Contains(ours[0].Message, "via eviction-api") {
		t.Errorf("agent eviction events %v, want exactly one on stress via eviction-api", summarize(ours))
	}
	checkOneEvictionRequest(t, e, ns, "stress") // Events merge a repeat; the audit log does not
	checkObservedAboveKubelet(t, ours)
	for _, ev := range eventsIn(ctx, t, e, ns, "Evicted") {
		if ev.Source.Component == "kubelet" {
			t.Errorf("the kubelet evicted %s: %q", ev.InvolvedObject.Name, ev.Message)
		}
	}
	for _, n := range []string{"burst", "guar"} {
		p, err := e.client.CoreV1().Pods(ns).Get(ctx, n, metav1.GetOptions{})
		if err != nil || p.Status.Phase != corev1.PodRunning || p.DeletionTimestamp != nil {
			t.Errorf("pod %s: %v, phase %v: want Running and not evicted", n, err, phaseOf(p))
		}
	}
	scheduledAfter := waitScheduledOnNode(ctx, t, e, ns, unrelated...).Sub(evicted)
	t.Logf("unrelated pods created right after the eviction scheduled on the node %s after it", scheduledAfter.Round(time.Millisecond))
	if limit := agent.DefaultConfig(e.node.Name()).Settings.TaintHysteresis + 20*time.Second; scheduledAfter > limit {
		t.Errorf("unrelated pods scheduled %s after the eviction, want within the taint hysteresis and a sync (%s)", scheduledAfter, limit)
	}
	if got := kernelOOMKillsSince(t, e, mark); got != 0 {
		t.Errorf("%d kernel OOM kills in the pods cgroup during the test, want 0", got)
	}
	if got := ooms.list(); len(got) != 0 {
		t.Errorf("containers terminated OOMKilled: %v", got)
	}
	t.Logf("agent: %s", strings.Join(inNamespace(a.LogLines(ctx, `"msg":"evict"`), ns), "\n"))
	metrics, err := a.Metrics(ctx)
	if err != nil {
		t.Errorf("%v", err)
	}
	sum, _ := chartinstall.MetricValue(metrics, "pressure_agent_detection_latency_seconds_sum")
	n, _ := chartinstall.MetricValue(metrics, "pressure_agent_detection_latency_seconds_count")
	t.Logf("agent kills: %d; detection latency so far (every rate): %.0f ms in %.0f observations",
		len(inNamespace(a.LogLines(ctx, "killed on the node"), ns)), sum*1000, n)
}

func phaseOf(p *corev1.Pod) corev1.PodPhase {
	if p == nil {
		return ""
	}
	return p.Status.Phase
}

func summarize(evs []corev1.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.InvolvedObject.Name+": "+e.Message)
	}
	return out
}

// checkObservedAboveKubelet parses "observed X" from the agent's event: the request went out while more
// than the kubelet's threshold was still available.
func checkObservedAboveKubelet(t *testing.T, evs []corev1.Event) {
	t.Helper()
	kubelet := resource.MustParse(evictionThreshold)
	for _, ev := range evs {
		f := strings.Fields(ev.Message)
		for i := 0; i+1 < len(f); i++ {
			if f[i] != "observed" {
				continue
			}
			q, err := resource.ParseQuantity(strings.TrimSuffix(f[i+1], ","))
			if err != nil {
				t.Errorf("event %q: observed %q: %v", ev.Message, f[i+1], err)
				continue
			}
			if q.Cmp(kubelet) <= 0 {
				t.Errorf("eviction requested at %s available, not above the kubelet's %s", q.String(), kubelet.String())
			}
			t.Logf("eviction requested at %s available (kubelet threshold %s)", q.String(), kubelet.String())
		}
	}
}

// Scenario 3: a critical pod that uses the most memory is never evicted.
func TestAgentNeverEvictsCriticalPod(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "agent-critical")
	createPod(ctx, t, e, stressPod(ns, "victim", []string{"mem", "--rate", "0", "--target", "400Mi"}, "", false))
	waitRunning(ctx, t, e, ns, "victim")
	crit := stressPod("kube-system", "critical-hog", []string{"mem", "--rate", "256Mi", "--target", "1300Mi"}, "", false)
	crit.GenerateName, crit.Name = "critical-hog-", ""
	crit.Spec.PriorityClassName = "system-node-critical"
	created, err := e.client.CoreV1().Pods("kube-system").Create(ctx, crit, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.client.CoreV1().Pods("kube-system").Delete(context.Background(), created.Name, metav1.DeleteOptions{})
	})
	waitRunning(ctx, t, e, "kube-system", created.Name)
	a := startAgent(t, e, nil)
	poll(ctx, t, "victim evicted by the agent", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
		return len(evs) > 0, fmt.Sprint(summarize(evs))
	})
	time.Sleep(10 * time.Second)
	p, err := e.client.CoreV1().Pods("kube-system").Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		t.Fatalf("critical pod %s: %v phase %v deleting %v: want Running, untouched", created.Name, err, phaseOf(p), p != nil && p.DeletionTimestamp != nil)
	}
	if cs := p.Status.ContainerStatuses; len(cs) != 1 || cs[0].RestartCount != 0 {
		t.Errorf("critical pod container statuses %+v: want one container never restarted", cs)
	}
	for _, reason := range []string{actuate.ReasonPressureEviction, actuate.ReasonPressureEvictionFailed} {
		if evs := eventsIn(ctx, t, e, "kube-system", reason); len(evs) != 0 {
			t.Errorf("%s events in kube-system: %v", reason, summarize(evs))
		}
	}
	t.Logf("agent: %s", strings.Join(a.logLines(`"msg":"evict"`), "\n"))
}
