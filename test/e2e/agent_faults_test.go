package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/agent"
)

// Scenario 5: --dry-run evicts nothing and reports what it would have done.
func TestAgentDryRunEvictsNothing(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "agent-dry")
	// 1700Mi: 348Mi left, below the agent's 456Mi, above the kubelet's 200Mi.
	createPod(ctx, t, e, stressPod(ns, "stress", []string{"mem", "--rate", "256Mi", "--target", "1700Mi"}, "", false))
	a := startAgent(t, e, func(c *agent.Config) { c.Settings.DryRun, c.Ladder.DryRun = true, true })
	poll(ctx, t, "would-evict event", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEvictionDryRun)
		return len(evs) > 0, fmt.Sprint(summarize(evs))
	})
	time.Sleep(10 * time.Second)
	p, err := e.client.CoreV1().Pods(ns).Get(ctx, "stress", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		t.Errorf("stress pod: %v phase %v: want Running and not evicted in dry-run", err, phaseOf(p))
	}
	if evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction); len(evs) != 0 {
		t.Errorf("PressureEviction events in dry-run: %v", summarize(evs))
	}
	if tn := nodeTaint(ctx, t, e); tn != nil {
		t.Errorf("dry-run tainted the node: %v", tn)
	}
	t.Logf("dry-run: %s", a.metricLines("pressure_agent_evictions_total"))
}

// Scenario 6: the agent is stopped and restarted during pressure: no pod is evicted twice.
func TestAgentRestartDuringPressureEvictsNoPodTwice(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "agent-restart")
	createPod(ctx, t, e, stressPod(ns, "bystander", []string{"mem", "--rate", "0", "--target", "100Mi"}, "", false))
	waitRunning(ctx, t, e, ns, "bystander")
	first := startAgent(t, e, nil)
	createPod(ctx, t, e, stressPod(ns, "stress", []string{"mem", "--rate", "256Mi", "--target", "1800Mi"}, "", false))
	poll(ctx, t, "first agent evicts stress", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
		return len(evs) > 0, ""
	})
	first.stop(t) // right after the request, while the pod is still stopping
	second := startAgent(t, e, nil)
	time.Sleep(10 * time.Second)
	evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
	if len(evs) != 1 || evs[0].Count != 1 || evs[0].InvolvedObject.Name != "stress" {
		t.Errorf("eviction events %v (count %d), want one, once, on stress", summarize(evs), countOf(evs))
	}
	checkOneEvictionRequest(t, e, ns, "stress")
	if got := counterSum(t, second, "pressure_agent_evictions_total"); got != 0 {
		t.Errorf("the restarted agent made %v eviction requests, want 0", got)
	}
	p, err := e.client.CoreV1().Pods(ns).Get(ctx, "bystander", metav1.GetOptions{})
	if err != nil || p.DeletionTimestamp != nil {
		t.Errorf("bystander: %v, deleting %v: want untouched", err, p != nil && p.DeletionTimestamp != nil)
	}
}

func countOf(evs []corev1.Event) int32 {
	var n int32
	for _, e := range evs {
		n += e.Count
	}
	return n
}

func counterSum(t *testing.T, a *agentRun, name string) float64 {
	mfs, err := a.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func gaugeOf(a *agentRun, name, label, value string) (float64, bool) {
	mfs, err := a.reg.Gather()
	if err != nil {
		return 0, false
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabel(m.GetLabel(), label, value) {
				return m.GetGauge().GetValue(), true
			}
		}
	}
	return 0, false
}

func hasLabel(ls []*dto.LabelPair, name, value string) bool {
	for _, l := range ls {
		if l.GetName() == name && l.GetValue() == value {
			return true
		}
	}
	return false
}

// Scenario 7: the API server is stopped for 20 s while the node crosses the agent's threshold, then
// started again: the agent keeps observing, backs off, and evicts the pod once the API answers.
func TestAgentRecoversFromAPIServerOutageDuringPressure(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "agent-outage")
	a := startAgent(t, e, nil)
	mark := kernelMark(t)
	// 64Mi/s to 1700Mi: crosses the agent's 456Mi at about 1592Mi, holds at 348Mi left (kubelet: 200Mi).
	createPod(ctx, t, e, stressPod(ns, "stress", []string{"mem", "--rate", "64Mi", "--target", "1700Mi"}, "", false))
	poll(ctx, t, "stress at 1.2Gi", func() (bool, string) {
		v, ok := gaugeOf(a, "pressure_agent_signal_available_bytes", "signal", "allocatableMemory.available")
		return ok && v < float64(2048-1200)*(1<<20), fmt.Sprint(v)
	})
	if err := e.cp.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	up := false
	defer func() {
		if !up {
			_ = e.cp.StartAPIServer(context.Background())
		}
	}()
	var minAvail float64 = 1 << 62
	for time.Since(stopped) < 20*time.Second {
		if code, body := httpGet("http://" + a.health + "/healthz"); code != 200 {
			t.Errorf("healthz during the outage: %d %s", code, body)
		}
		if v, ok := gaugeOf(a, "pressure_agent_signal_available_bytes", "signal", "allocatableMemory.available"); ok {
			minAvail = min(minAvail, v)
		}
		time.Sleep(time.Second)
	}
	if thr, _ := gaugeOf(a, "pressure_agent_signal_threshold_bytes", "signal", "allocatableMemory.available"); minAvail >= thr {
		t.Errorf("available never fell below the agent's threshold during the outage (min %v, threshold %v)", minAvail, thr)
	}
	if err := e.cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	up = true
	t.Logf("API server back after %s; requests so far: %s", time.Since(stopped).Round(time.Millisecond),
		strings.ReplaceAll(a.metricLines("pressure_agent_evictions_total"), "\n", "; "))
	poll(ctx, t, "stress evicted after the API came back", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
		return len(evs) > 0, ""
	})
	time.Sleep(3 * time.Second)
	if evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction); len(evs) != 1 {
		t.Errorf("eviction events %v, want exactly one", summarize(evs))
	}
	checkOneEvictionRequest(t, e, ns, "stress")
	for _, ev := range eventsIn(ctx, t, e, ns, "Evicted") {
		if ev.Source.Component == "kubelet" {
			t.Errorf("the kubelet evicted %s: %q", ev.InvolvedObject.Name, ev.Message)
		}
	}
	if got := kernelOOMKillsSince(t, e, mark); got != 0 {
		t.Errorf("%d kernel OOM kills in the pods cgroup during the test", got)
	}
	t.Logf("requests: %s", strings.ReplaceAll(a.metricLines("pressure_agent_evictions_total"), "\n", "; "))
}
