package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/images"
	"github.com/kube-pressure/pressure/test/oomkill"
)

const ns = "bench"

// runResult is what one ramp measured.
type runResult struct {
	c         contender
	rate      string
	idx       int
	baseline  int64 // pods working set before the ramp
	crossAt   int64 // stress bytes at which the agent's threshold is crossed
	achieved  float64
	crossTime time.Time // first sample of the pods cgroup at or below the agent's threshold (zero: never)
	// logCrossTime is the first alloc line at or above crossAt (zero: none copied), the crossing of
	// the host-process runs (docs/benchmarks-history.md); it misses the stress container's overhead.
	logCrossTime time.Time
	evictTime    time.Time // the agent's evict log line for the stress pod (zero: none)
	// apiReceived and apiAnswered are the stress pod's first eviction request as the API server's audit
	// log saw it arrive and answered it (zero: no request).
	apiReceived, apiAnswered time.Time
	metricLat                string    // the agent's own detection latency (histogram sum/count)
	victims                  []string  // pods the agent evicted
	trendKill                bool      // the agent's trend rung SIGKILLed the pod
	kernelOOM                []string  // new kernel OOM kills in the pods cgroup (test/oomkill)
	oomKilled                []string  // containers terminated OOMKilled
	kubelet                  []string  // pods the kubelet evicted
	endTime                  time.Time // the stress pod seen gone or terminated
	allocs                   int
	err                      error
}

// received is crossing → the API server received the eviction request (its audit log).
func (r runResult) received() (time.Duration, bool) {
	if r.crossTime.IsZero() || r.apiReceived.IsZero() {
		return 0, false
	}
	return r.apiReceived.Sub(r.crossTime), true
}

func (r runResult) latency() (time.Duration, bool) {
	if r.crossTime.IsZero() || r.evictTime.IsZero() {
		return 0, false
	}
	return r.evictTime.Sub(r.crossTime), true
}

// ramps runs every contender at every rate, runs times, interleaved by round: in each round every
// contender runs every rate (A 64Mi, A 256Mi, A 1024Mi, C 64Mi, ...), so the agent pod is taken off
// the node and back once per round, not once per run.
func (b *bench) ramps(ctx context.Context, o options, rep *report) error {
	if err := b.ensureNamespace(ctx); err != nil {
		return err
	}
	for i := 1; i <= o.runs; i++ {
		for _, c := range o.contenders {
			if c.steadyOnly {
				continue
			}
			if err := b.place(ctx, c); err != nil {
				return err
			}
			for _, rate := range o.rates {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				r := b.ramp(ctx, c, rate, i)
				rep.runs = append(rep.runs, r)
				logf("%s", r.line())
				if r.err != nil && ctx.Err() != nil {
					return ctx.Err()
				}
			}
		}
	}
	return nil
}

// place puts the agent pod on the node for an agent contender and takes it off for the others.
func (b *bench) place(ctx context.Context, c contender) error {
	if c.agent {
		_, err := b.agentOn(ctx, c)
		return err
	}
	if b.agent == nil {
		return nil
	}
	return b.agentOff(ctx)
}

// ramp is one run: an idle node with the two neighbour pods, then a stress pod ramping to 3Gi at rate.
func (b *bench) ramp(ctx context.Context, c contender, rate string, i int) (r runResult) {
	r = runResult{c: c, rate: rate, idx: i}
	if r.err = b.resetNode(ctx); r.err != nil {
		return r
	}
	limit, err := readInt(filepath.Join(b.node.PodsMemoryCgroupDir(), "memory.limit_in_bytes"))
	if err != nil {
		r.err = err
		return r
	}
	tag := fmt.Sprintf("%s-%s-%d", strings.ToLower(c.name), strings.ToLower(rate), i)
	var m0 latencyMetric
	if c.agent {
		if m0, r.err = readLatency(ctx, b.agent); r.err != nil {
			return r
		}
	}
	if r.baseline, r.err = workingSet(b.node.PodsMemoryCgroupDir()); r.err != nil {
		return r
	}
	r.crossAt = limit - b.crossingAvail - r.baseline
	mark, err := oomkill.Mark()
	if err != nil {
		r.err = err
		return r
	}
	start := time.Now()
	name := "stress-" + tag
	cross := watchCrossing(b.node.PodsMemoryCgroupDir(), limit, b.crossingAvail)
	if _, err := b.client.CoreV1().Pods(ns).Create(ctx, benchPod(name, []string{"mem", "--rate", rate, "--target", "3Gi"}, "", false), metav1.CreateOptions{}); err != nil {
		cross.stop()
		r.err = err
		return r
	}
	logText := b.watchRamp(ctx, name, &r)
	r.crossTime = cross.stop()
	if c.agent {
		r.err = b.readAgent(ctx, &r, m0, ns+"/"+name, start)
	}
	if evs, err := readAudit(b.auditLog); err != nil {
		r.err = errors.Join(r.err, err)
	} else if e, ok := evs[ns+"/"+name]; ok {
		r.apiReceived, r.apiAnswered = e.Received, e.Completed
	}
	if r.kernelOOM, err = b.kernelOOMSince(mark); err != nil {
		r.err = err
	}
	allocs := parseStressLog(logText)
	r.allocs = len(allocs)
	r.achieved = achievedRate(allocs)
	for _, al := range allocs {
		if al.bytes >= r.crossAt {
			r.logCrossTime = al.t
			break
		}
	}
	_ = b.client.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
	if err := os.WriteFile(filepath.Join(b.dir, "stress-"+tag+".log"), []byte(logText), 0o644); err != nil {
		logf("keep stress log: %v", err)
	}
	return r
}

// readAgent records what the agent did in the run that started at start: its detection latency
// metric (the observations added since m0), its first eviction request of pod, every pod it evicted
// and whether its trend rung killed pod. Its log is kept in the bench directory.
func (b *bench) readAgent(ctx context.Context, r *runResult, m0 latencyMetric, pod string, start time.Time) error {
	m1, err := readLatency(ctx, b.agent)
	if err != nil {
		return err
	}
	r.metricLat = m1.since(m0)
	text, err := b.agent.Log(ctx)
	if err != nil {
		return err
	}
	r.evictTime, r.victims, r.trendKill = parseAgentLog(text, pod, start)
	return os.WriteFile(filepath.Join(b.dir, "agent-"+b.agent.Pod.Name+".log"), []byte(text), 0o644)
}

// watchRamp polls the namespace every 100 ms until the stress pod is gone or terminated (then 3 s more,
// to see whether anything else goes), recording OOMKilled containers and kubelet evictions, and copying
// the stress container's log file from the node while it exists. It returns the last copy of the log.
func (b *bench) watchRamp(ctx context.Context, name string, r *runResult) string {
	var logText string
	deadline := time.Now().Add(2 * time.Minute)
	var after time.Time
	for time.Now().Before(deadline) && ctx.Err() == nil {
		list, err := b.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err == nil {
			found := false
			for _, p := range list.Items {
				r.noteOOM(p)
				if p.Name != name {
					continue
				}
				found = true
				if s := readPodLog(b.node.Cleanup().PodLogsDir, p); len(s) >= len(logText) {
					logText = s
				}
				if (p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded) && r.endTime.IsZero() {
					r.endTime = time.Now()
				}
			}
			if !found && r.endTime.IsZero() {
				r.endTime = time.Now()
			}
		}
		if !r.endTime.IsZero() && after.IsZero() {
			after = time.Now().Add(3 * time.Second)
		}
		if !after.IsZero() && time.Now().After(after) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r.endTime.IsZero() && r.err == nil {
		r.err = fmt.Errorf("stress pod %s neither gone nor terminated within 2m", name)
	}
	return logText
}

func (r *runResult) noteOOM(p corev1.Pod) {
	for _, cs := range p.Status.ContainerStatuses {
		for _, st := range []corev1.ContainerState{cs.State, cs.LastTerminationState} {
			if st.Terminated != nil && st.Terminated.Reason == "OOMKilled" {
				r.oomKilled = addOnce(r.oomKilled, p.Name+"/"+cs.Name)
			}
		}
	}
	if p.Status.Reason == "Evicted" && strings.HasPrefix(p.Status.Message, "The node was low on resource") {
		r.kubelet = addOnce(r.kubelet, p.Name)
	}
}

func addOnce(s []string, x string) []string {
	for _, y := range s {
		if y == x {
			return s
		}
	}
	return append(s, x)
}

// readPodLog reads the stress container's CRI log file under the kubelet's pod logs dir.
func readPodLog(dir string, p corev1.Pod) string {
	b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%s_%s_%s", p.Namespace, p.Name, p.UID), "stress", "0.log"))
	if err != nil {
		return ""
	}
	return string(b)
}

// benchPod is a stress pod tolerating every taint (the agent's and the kubelet's pressure taints must
// not keep the next run's pods off the node).
func benchPod(name string, args []string, mem string, guaranteed bool) *corev1.Pod {
	c := corev1.Container{Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever, Args: args}
	if mem != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}
		if guaranteed {
			rl := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourceCPU: resource.MustParse("50m")}
			c.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl}
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c},
			TerminationGracePeriodSeconds: ptr.To[int64](2),
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}}},
	}
}
