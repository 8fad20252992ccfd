package e2e

// kubectl pressure why on the package's real node: each case is produced for real (the kubelet's own
// eviction, a container over its limit, failed liveness probes, a user's delete, a pod deleted by
// pressure-janitor, pressure-agent's eviction, a preemption, a client's Eviction API call, a SIGKILL
// nobody records) and the verdict, its confidence and its evidence are checked. The text
// output of every case is logged (docs/why.md quotes it).

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/actuate"
	config "github.com/kube-pressure/pressure/internal/config/janitor"
	"github.com/kube-pressure/pressure/internal/evidence"
	"github.com/kube-pressure/pressure/internal/janitor"
	"github.com/kube-pressure/pressure/internal/why"
)

// whyVerdict runs `kubectl pressure why` (json for the checks, text for the log) and checks the cause,
// the confidence and that every wanted evidence source is named.
func whyVerdict(ctx context.Context, t *testing.T, e *env, ns, pod string, cause why.Cause, conf why.Confidence,
	sources ...string) why.Verdict {
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
	if v.Cause != cause || v.Confidence != conf {
		t.Errorf("why %s/%s: cause %s confidence %s (%s), want %s, %s", ns, pod, v.Cause, v.Confidence, v.Summary, cause, conf)
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
	whyVerdict(ctx, t, e, ns, "limited", why.CauseOOMOwnLimit, why.High, "pod status", "pod spec")
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
	whyVerdict(ctx, t, e, ns, "unhealthy", why.CauseLivenessProbe, why.High, "Killing", "pod status")
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
	v := whyVerdict(ctx, t, e, ns, "deleted", why.CauseDeleted, why.Medium, "Killing")
	if !v.PodGone {
		t.Errorf("verdict says the pod is not gone: %+v", v)
	}
}

// The kubelet's own eviction (memcg notifier on) of a Job's pod, then the same pod after pressure-janitor
// deleted it: the verdict then comes from the janitor's evidence Event on the Job, also once the pod's own
// Events are gone (deleted here, as the API server's --event-ttl would), and by UID.
func TestWhyKubeletEvictionThenJanitorDelete(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "why-evict")
	// backoffLimit 0: the evicted pod fails the Job, which creates no replacement.
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "hog", Namespace: ns},
		Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: corev1.PodTemplateSpec{Spec: hogSpec()}}}
	if _, err := e.client.BatchV1().Jobs(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var hog string
	poll(ctx, t, "the Job's pod", func() (bool, string) {
		l, err := e.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: batchv1.JobNameLabel + "=hog"})
		if err != nil || len(l.Items) != 1 {
			return false, fmt.Sprint(err)
		}
		hog = l.Items[0].Name
		return true, ""
	})
	evicted := waitEvictedByKubelet(ctx, t, e, ns, hog)
	// While MemoryPressure holds (transition period 20s) the kubelet rejects a new BestEffort pod that
	// does not tolerate the memory-pressure taint; bound directly, so the scheduler's taint check cannot
	// keep it Pending instead.
	late := stressPod(ns, "late", []string{"sleep"}, "", false)
	late.Spec.NodeName = e.node.Name()
	createPod(ctx, t, e, late)
	waitPod(ctx, t, e, ns, "late", "late pod rejected", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	whyVerdict(ctx, t, e, ns, "late", why.CauseKubeletRejection, why.High, "pod status")
	v := whyVerdict(ctx, t, e, ns, hog, why.CauseKubeletEviction, why.High, "pod status", "DisruptionTarget", "Evicted")
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
		_, err := e.client.CoreV1().Pods(ns).Get(ctx, hog, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	// The janitor writes its evidence Event right after the delete: wait for the one on the Job before
	// stopping the janitor, or the stop may cancel the write.
	poll(ctx, t, "janitor evidence Event on the Job", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, evidence.EventReason)
		for _, ev := range evs {
			if ev.InvolvedObject.Kind == "Job" && ev.InvolvedObject.Name == "hog" {
				return true, ""
			}
		}
		return false, fmt.Sprint(summarize(evs))
	})
	stop()
	if err := <-done; err != nil {
		t.Errorf("janitor: %v", err)
	}
	const onJob = "pressure-janitor evidence on Job/hog"
	v = whyVerdict(ctx, t, e, ns, hog, why.CauseKubeletEviction, why.High, onJob, "Evicted")
	if !v.PodGone || v.UID != string(evicted.UID) {
		t.Errorf("verdict of the deleted pod: gone %v uid %q, want gone with uid %s", v.PodGone, v.UID, evicted.UID)
	}

	// The pod's own Events expire an hour later (--event-ttl): what is left is the janitor's record.
	evs, err := e.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(evicted.UID)})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if err := e.client.CoreV1().Events(ns).Delete(ctx, ev.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("deleted the %d Events of pod %s", len(evs.Items), hog)
	for _, q := range []string{hog, string(evicted.UID)} {
		v = whyVerdict(ctx, t, e, ns, q, why.CauseKubeletEviction, why.High, onJob)
		for _, f := range v.Evidence {
			if strings.Contains(f.Source, "on Pod/") {
				t.Errorf("why %s: evidence from an Event on the pod after its Events were deleted: %+v", q, f)
			}
		}
		if !v.PodGone || v.Pod != hog || v.UID != string(evicted.UID) || v.Eviction == nil || v.Eviction.Resource != "memory" {
			t.Errorf("why %s from the janitor's record alone: pod %q uid %q gone %v eviction %+v, want %s, %s, gone, memory",
				q, v.Pod, v.UID, v.PodGone, v.Eviction, hog, evicted.UID)
		}
	}
}

// Something outside the kubelet and the kernel's OOM killer SIGKILLs the container's process (here the
// test, as root on the node): exit 137, reason Error, and no Event names the sender. The verdict is
// Unknown, says so, and lists what was checked.
func TestWhyKillFromOutsideIsUnknown(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "why-kill")
	p := stressPod(ns, "killed", []string{"sleep"}, "", false)
	p.Spec.Tolerations = tolerateAll()
	createPod(ctx, t, e, p)
	waitRunning(ctx, t, e, ns, "killed")
	got, err := e.client.CoreV1().Pods(ns).Get(ctx, "killed", metav1.GetOptions{})
	if err != nil || len(got.Status.ContainerStatuses) != 1 {
		t.Fatalf("pod killed: %v %+v", err, got.Status.ContainerStatuses)
	}
	id := got.Status.ContainerStatuses[0].ContainerID
	_, id, _ = strings.Cut(id, "://")
	dir := filepath.Join(e.node.PodsMemoryCgroupDir(), "besteffort", "pod"+string(got.UID), id)
	pids := cgroupProcsUnder(dir)
	if len(pids) == 0 {
		t.Fatalf("no process in the container's cgroup %s", dir)
	}
	for _, pid := range pids {
		n, err := strconv.Atoi(pid)
		if err != nil {
			t.Fatalf("%s/cgroup.procs: pid %q: %v", dir, pid, err)
		}
		if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
			t.Fatalf("kill -9 %d: %v", n, err)
		}
	}
	waitPod(ctx, t, e, ns, "killed", "container terminated", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return len(cs) == 1 && cs[0].State.Terminated != nil
	})
	v := whyVerdict(ctx, t, e, ns, "killed", why.CauseUnknown, why.Low, "pod status")
	if !strings.Contains(v.Summary, "SIGKILL (exit 137)") || len(v.Checked) == 0 {
		t.Errorf("verdict %q with checked %q: want the SIGKILL named and what was checked listed", v.Summary, v.Checked)
	}
}

// A client (kubectl drain, a descheduler) evicts the pod through the Eviction API: the DisruptionTarget
// condition names it, and nothing names pressure-agent. A finalizer keeps the pod object after its
// container stopped, so the condition can still be read.
func TestWhyEvictionAPIByAClient(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "why-drain")
	p := stressPod(ns, "drained", []string{"sleep"}, "", false)
	p.Spec.Tolerations, p.Finalizers = tolerateAll(), []string{"pressure.test/hold"}
	createPod(ctx, t, e, p)
	release := func() {
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		_, _ = e.client.CoreV1().Pods(ns).Patch(context.Background(), "drained", types.MergePatchType, patch, metav1.PatchOptions{})
	}
	t.Cleanup(release)
	waitRunning(ctx, t, e, ns, "drained")
	ev := &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Name: "drained", Namespace: ns}}
	if err := e.client.CoreV1().Pods(ns).EvictV1(ctx, ev); err != nil {
		t.Fatal(err)
	}
	waitPod(ctx, t, e, ns, "drained", "pod terminating with its container stopped", func(p *corev1.Pod) bool {
		cs := p.Status.ContainerStatuses
		return p.DeletionTimestamp != nil && len(cs) == 1 && cs[0].State.Terminated != nil
	})
	whyVerdict(ctx, t, e, ns, "drained", why.CauseEvictionAPI, why.High, "DisruptionTarget")
	release()
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
	v := whyVerdict(ctx, t, e, ns, "stress", why.CauseAgentEviction, why.High, "PressureEviction", "ledger annotation")
	if v.Eviction == nil || v.Eviction.Signal == "" || v.Eviction.Threshold == "" || v.Eviction.Rank != 1 {
		t.Errorf("agent eviction detail %+v: want the signal, threshold and rank from the agent's Event", v.Eviction)
	}
	// Once the pod is gone (the Eviction API deletes it): found by name through its Events, the node
	// through the kubelet's, the ledger through the node.
	poll(ctx, t, "evicted pod gone", func() (bool, string) {
		_, err := e.client.CoreV1().Pods(ns).Get(ctx, "stress", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	gone := whyVerdict(ctx, t, e, ns, "stress", why.CauseAgentEviction, why.High, "PressureEviction", "ledger annotation")
	if !gone.PodGone || gone.UID != v.UID || gone.Eviction == nil || gone.Eviction.Signal != v.Eviction.Signal {
		t.Errorf("verdict of the gone pod: gone %v uid %q eviction %+v, want gone, uid %s, signal %s", gone.PodGone, gone.UID,
			gone.Eviction, v.UID, v.Eviction.Signal)
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
	whyVerdict(ctx, t, e, ns, "low", why.CausePreempted, why.High, "Preempted")
	for _, n := range []string{"low", "high"} {
		_ = e.client.CoreV1().Pods(ns).Delete(ctx, n, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	}
}
