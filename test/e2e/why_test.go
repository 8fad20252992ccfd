package e2e

// kubectl pressure why on the package's real node: each case is produced for real (the kubelet's own
// eviction, a container over its limit, failed liveness probes, a user's delete, a pod deleted by
// pressure-janitor, pressure-agent's eviction) and the verdict and its evidence are checked. The text
// output of every case is logged (docs/why.md quotes it).

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/actuate"
	config "github.com/kube-pressure/pressure/internal/config/janitor"
	"github.com/kube-pressure/pressure/internal/janitor"
	"github.com/kube-pressure/pressure/internal/why"
)

// whyVerdict runs `kubectl pressure why` (json for the checks, text for the log) and checks the cause
// and that every wanted evidence source is named.
func whyVerdict(ctx context.Context, t *testing.T, e *env, ns, pod string, cause why.Cause, sources ...string) why.Verdict {
	t.Helper()
	out, err := kubectlPressure(ctx, t, e, "why", pod, "-n", ns, "-o", "json")
	if err != nil {
		t.Fatalf("why %s/%s: %v", ns, pod, err)
	}
	var v why.Verdict
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("why %s/%s: not JSON: %v\n%s", ns, pod, err, out)
	}
	text, _ := kubectlPressure(ctx, t, e, "why", pod, "-n", ns)
	t.Logf("kubectl pressure why %s -n %s\n%s", pod, ns, text)
	if v.Cause != cause {
		t.Errorf("why %s/%s: cause %s (%s), want %s", ns, pod, v.Cause, v.Summary, cause)
	}
	for _, s := range sources {
		found := false
		for _, f := range v.Evidence {
			found = found || strings.Contains(f.Source, s)
		}
		if !found {
			t.Errorf("why %s/%s: no evidence from %q in %+v", ns, pod, s, v.Evidence)
		}
	}
	return v
}

func waitPod(ctx context.Context, t *testing.T, e *env, ns, name, what string, cond func(*corev1.Pod) bool) {
	t.Helper()
	poll(ctx, t, what, func() (bool, string) {
		p, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return cond(p), fmt.Sprintf("%s %+v", p.Status.Phase, p.Status.ContainerStatuses)
	})
}

func TestWhyContainerLimitOOM(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "why-oom")
	p := stressPod(ns, "limited", []string{"mem", "--rate", "0", "--target", "256Mi"}, "64Mi", true)
	p.Spec.Tolerations = tolerateAll()
	createPod(ctx, t, e, p)
	waitPod(ctx, t, e, ns, "limited", "container OOMKilled", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Terminated != nil && cs[0].State.Terminated.Reason == "OOMKilled"
	})
	whyVerdict(ctx, t, e, ns, "limited", why.CauseOOMOwnLimit, "pod status", "pod spec")
}

func TestWhyLivenessProbeKill(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "why-live")
	p := stressPod(ns, "unhealthy", []string{"sleep"}, "", false)
	p.Spec.RestartPolicy = corev1.RestartPolicyAlways
	p.Spec.Tolerations = tolerateAll()
	p.Spec.Containers[0].LivenessProbe = &corev1.Probe{
		ProbeHandler:  corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}},
		PeriodSeconds: 1, FailureThreshold: 1, TimeoutSeconds: 1,
	}
	createPod(ctx, t, e, p)
	waitPod(ctx, t, e, ns, "unhealthy", "container restarted", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].RestartCount > 0 && cs[0].LastTerminationState.Terminated != nil
	})
	whyVerdict(ctx, t, e, ns, "unhealthy", why.CauseLivenessProbe, "Killing", "pod status")
	_ = e.client.CoreV1().Pods(ns).Delete(ctx, "unhealthy", metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
}

func TestWhyUserDelete(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "why-del")
	p := stressPod(ns, "deleted", []string{"sleep"}, "", false)
	p.Spec.Tolerations = tolerateAll()
	createPod(ctx, t, e, p)
	waitRunning(ctx, t, e, ns, "deleted")
	if err := e.client.CoreV1().Pods(ns).Delete(ctx, "deleted", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "pod gone", func() (bool, string) {
		_, err := e.client.CoreV1().Pods(ns).Get(ctx, "deleted", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	v := whyVerdict(ctx, t, e, ns, "deleted", why.CauseDeleted, "Killing")
	if !v.PodGone {
		t.Errorf("verdict says the pod is not gone: %+v", v)
	}
}

// The kubelet's own eviction (memcg notifier on), then the same pod after pressure-janitor deleted it:
// the verdict then comes from the janitor's evidence Event.
func TestWhyKubeletEvictionThenJanitorDelete(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "why-evict")
	evictHogByKubelet(ctx, t, e, ns, "hog")
	// While MemoryPressure holds (transition period 20s) the kubelet rejects a new BestEffort pod that
	// does not tolerate the memory-pressure taint; bound directly, so the scheduler's taint check cannot
	// keep it Pending instead.
	late := stressPod(ns, "late", []string{"sleep"}, "", false)
	late.Spec.NodeName = e.node.Name()
	createPod(ctx, t, e, late)
	waitPod(ctx, t, e, ns, "late", "late pod rejected", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	whyVerdict(ctx, t, e, ns, "late", why.CauseKubeletRejection, "pod status")
	v := whyVerdict(ctx, t, e, ns, "hog", why.CauseKubeletEviction, "pod status", "DisruptionTarget", "Evicted")
	if v.Eviction == nil || v.Eviction.Resource != "memory" || v.Eviction.Allocatable == nil || v.Eviction.Ranking == nil ||
		len(v.Eviction.Prevention) == 0 {
		t.Errorf("kubelet eviction detail %+v: want memory, allocatable math, a ranking and prevention", v.Eviction)
	}

	cfg := config.Config{TTL: 0, KeepPerOwner: 0, Reasons: config.DefaultReasons(), Namespaces: []string{ns},
		DeletionsPerSec: 10, Burst: 10, Workers: 1}
	jctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- janitor.RunWithOptions(jctx, cfg, janitor.Options{RESTConfig: e.cp.RESTConfig(),
			Logger: slog.New(slog.NewTextHandler(testWriter{t}, nil))})
	}()
	poll(ctx, t, "evicted pod deleted by the janitor", func() (bool, string) {
		_, err := e.client.CoreV1().Pods(ns).Get(ctx, "hog", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	// The janitor writes its evidence Event right after the delete: wait for it before stopping the
	// janitor, or the stop may cancel the write.
	poll(ctx, t, "janitor evidence Event", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, janitor.EventReason)
		return len(evs) > 0, fmt.Sprintf("%d events", len(evs))
	})
	stop()
	if err := <-done; err != nil {
		t.Errorf("janitor: %v", err)
	}
	v = whyVerdict(ctx, t, e, ns, "hog", why.CauseKubeletEviction, "pressure-janitor evidence")
	if !v.PodGone || v.UID == "" {
		t.Errorf("verdict of the deleted pod: gone %v uid %q, want gone with the UID from the record", v.PodGone, v.UID)
	}
}

func TestWhyAgentEviction(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	waitNoMemoryPressure(ctx, t, e) // else the kubelet rejects the BestEffort pod at admission
	ns := createNamespace(ctx, t, e, "why-agent")
	startAgent(t, e, nil)
	createPod(ctx, t, e, stressPod(ns, "stress", []string{"mem", "--rate", "64Mi", "--target", "3Gi"}, "", false))
	poll(ctx, t, "stress pod evicted by the agent", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
		return len(evs) > 0, fmt.Sprintf("%d events", len(evs))
	})
	v := whyVerdict(ctx, t, e, ns, "stress", why.CauseAgentEviction, "PressureEviction", "ledger annotation")
	if v.Eviction == nil || v.Eviction.Signal == "" || v.Eviction.Threshold == "" || v.Eviction.Rank != 1 {
		t.Errorf("agent eviction detail %+v: want the signal, threshold and rank from the agent's Event", v.Eviction)
	}
}

// A pod requesting most of the node's memory is preempted by the scheduler for a pod of higher priority.
func TestWhyPreempted(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	waitNoMemoryPressure(ctx, t, e)
	ns := createNamespace(ctx, t, e, "why-preempt")
	pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{GenerateName: "why-high-"}, Value: 1000}
	pc, err := e.client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.client.SchedulingV1().PriorityClasses().Delete(context.Background(), pc.Name, metav1.DeleteOptions{})
	})
	low := stressPod(ns, "low", []string{"sleep"}, "1200Mi", false)
	low.Spec.Tolerations = tolerateAll()
	createPod(ctx, t, e, low)
	waitRunning(ctx, t, e, ns, "low")
	high := stressPod(ns, "high", []string{"sleep"}, "1200Mi", false)
	high.Spec.Tolerations, high.Spec.PriorityClassName = tolerateAll(), pc.Name
	createPod(ctx, t, e, high)
	// The victim terminates within seconds (the stress image exits on SIGTERM): wait for the scheduler's
	// Event, which outlives it, and ask while the pod is terminating or already gone.
	poll(ctx, t, "low pod preempted", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, "Preempted")
		return len(evs) > 0, fmt.Sprint(summarize(evs))
	})
	whyVerdict(ctx, t, e, ns, "low", why.CausePreempted, "Preempted")
	for _, n := range []string{"low", "high"} {
		_ = e.client.CoreV1().Pods(ns).Delete(ctx, n, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}
}
