package vm

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/images"
)

// RaceResult is one OOM race on a guest node: a stress pod ramps memory until someone ends it.
type RaceResult struct {
	Rate string // the stress pod's --rate ("0": as fast as the guest goes)
	// Evictor is "agent" (a PressureEviction event), "kubelet" (the pod Evicted by the kubelet), or
	// "none" (the pod ended otherwise, e.g. OOM-killed, or the race timed out).
	Evictor string
	// OOMKills is the increase of oom_kill in the pods cgroup's memory.events during the race (the
	// kernel's kills of any pod's process); OOMKilled is the stress container's OOMKilled status.
	OOMKills  int
	OOMKilled bool
	// Elapsed runs from the stress pod's Running phase to the eviction (or its end).
	Elapsed time.Duration
	// PeakMiB is the highest memory.current of the pods cgroup sampled; RateMiBps the fastest growth
	// over 3 s of samples (the achieved ramp, guest time).
	PeakMiB, RateMiBps float64
	// Evicted are the pods evicted during the race, "agent:NAME" or "kubelet:NAME", sorted; Survivors the
	// cast's neighbours still Running at its end, sorted.
	Evicted, Survivors []string
	// Latency runs from the crossing of the agent's threshold by the pods cgroup's allocatable available
	// memory (the guest's watcher, every 10 ms) to the agent's start of the stress pod's eviction request
	// (its evict line's requested_at): both on the guest's clock. LatencyWhy says why it is missing.
	Latency    time.Duration
	LatencyWhy string
	// LatencySplit is where Latency went: the deciding sync's start, read, decision and request (the
	// evict line's phases).
	LatencySplit string
	Detail       string
}

func (r RaceResult) String() string {
	lat := "crossing → request " + r.Latency.Round(time.Millisecond).String()
	if r.LatencySplit != "" {
		lat += " (" + r.LatencySplit + ")"
	}
	if r.LatencyWhy != "" {
		lat = "no crossing → request figure: " + r.LatencyWhy
	}
	return fmt.Sprintf("rate %s: evictor %s, evicted %v, survivors %v, oom_kill %d, OOMKilled %v, %s after Running, pods cgroup peak %.0f MiB, ramp %.1f MiB/s, %s%s",
		r.Rate, r.Evictor, r.Evicted, r.Survivors, r.OOMKills, r.OOMKilled, r.Elapsed.Round(100*time.Millisecond), r.PeakMiB, r.RateMiBps, lat, r.Detail)
}

// Neighbours are the race's cast beside the BestEffort stress pod, as in the v1 race (test/e2e, bench/agent):
// a Burstable pod holding more than its request and a Guaranteed pod, both steady. Only the stress pod may be
// evicted.
var Neighbours = []string{"burstable", "guaranteed"}

// neighbour is one steady pod of the cast: stress holding target bytes, with request (and limit when
// guaranteed) memory.
func neighbour(ns, name, target, request string, guaranteed bool) *corev1.Pod {
	res := corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(request)}}
	if guaranteed {
		// Half a vCPU: the limit also throttles the container's creation (runc init runs in the pod's
		// cgroup), and at 10m a TCG guest took over 4 min to start it.
		res.Requests[corev1.ResourceCPU] = resource.MustParse("500m")
		res.Limits = res.Requests.DeepCopy()
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{
			HostNetwork: true, RestartPolicy: corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers: []corev1.Container{{Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever,
				Args: []string{"mem", "--rate", "0", "--target", target}, Resources: res}},
		},
	}
}

// startNeighbours creates the cast's neighbours on the node and waits until both are Running.
func (n *Node) startNeighbours(ctx context.Context, ns string) error {
	for _, p := range []*corev1.Pod{neighbour(ns, "burstable", "96Mi", "64Mi", false), neighbour(ns, "guaranteed", "48Mi", "96Mi", true)} {
		p.Spec.NodeName = n.Name
		if _, err := n.Client.CoreV1().Pods(ns).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("race neighbour %s: %w", p.Name, err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	for {
		running, states := 0, []string{}
		for _, name := range Neighbours {
			p, err := n.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			switch {
			case err != nil:
				states = append(states, name+": "+err.Error())
			case p.Status.Phase == corev1.PodRunning:
				running++
			default:
				states = append(states, podState(p))
			}
		}
		if running == len(Neighbours) {
			time.Sleep(2 * time.Second) // their memory allocated (stress holds its target at once)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("race neighbours not Running: %s: %w", strings.Join(states, "; "), ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// Race creates namespace ns and in it the Neighbours (Running first) and a BestEffort stress pod on the
// node (host network) that ramps memory at rate toward 3Gi, and waits until the stress pod is evicted or
// ends (at most timeout).
func (n *Node) Race(ctx context.Context, ns, rate string, timeout time.Duration) (RaceResult, error) {
	res := RaceResult{Rate: rate, Evictor: "none"}
	c := n.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("race namespace: %w", err)
	}
	if err := n.startNeighbours(ctx, ns); err != nil {
		return res, err
	}
	before := n.lastOOMKills()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "stress", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeName: n.Name, HostNetwork: true, RestartPolicy: corev1.RestartPolicyNever,
			AutomountServiceAccountToken: ptr.To(false), TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers: []corev1.Container{{Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever,
				Args: []string{"mem", "--rate", rate, "--target", "3Gi"}}},
		},
	}
	if _, err := c.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		return res, fmt.Errorf("race pod: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var running time.Time
	for {
		p, err := c.CoreV1().Pods(ns).Get(ctx, "stress", metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return n.finish(ctx, ns, res, running, before, nil)
		case err != nil && ctx.Err() == nil:
			// a transient API error: try again
		case err != nil:
			return n.finish(context.Background(), ns, res, running, before, fmt.Errorf("race timed out after %s", timeout))
		default:
			if running.IsZero() && p.Status.Phase == corev1.PodRunning {
				running = time.Now()
			}
			if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded || p.DeletionTimestamp != nil {
				res.OOMKilled = oomKilled(p)
				if p.Status.Reason == "Evicted" {
					res.Evictor = "kubelet"
				}
				return n.finish(ctx, ns, res, running, before, nil)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// stressEventWait bounds how long raceEvents waits for the Event of the stress pod's eviction.
const stressEventWait = 30 * time.Second

// raceEvents are ns's evictionEvents. When the stress pod was deleted (an eviction) and no Event names it
// yet, it asks again each second, up to stressEventWait: the agent writes its Event after the eviction,
// and a guest short of the host's CPU writes it late (seen in make test: the pod deleted, no Event 3 s
// later).
func (n *Node) raceEvents(ctx context.Context, ns string) ([]string, bool, error) {
	deadline := time.Now().Add(stressEventWait)
	for {
		evicted, oomEvent, err := n.evictionEvents(ctx, ns)
		if err != nil || slices.Contains(evicted, "agent:stress") || slices.Contains(evicted, "kubelet:stress") || time.Now().After(deadline) {
			return evicted, oomEvent, err
		}
		p, err := n.Client.CoreV1().Pods(ns).Get(ctx, "stress", metav1.GetOptions{})
		if err == nil && p.DeletionTimestamp == nil {
			return evicted, oomEvent, nil // not deleted: it ended on its own (or the kernel killed it)
		}
		select {
		case <-ctx.Done():
			return evicted, oomEvent, nil
		case <-time.After(time.Second):
		}
	}
}

// finish reads the events and the sampler after the pod ended: who evicted, the kernel's OOM kills.
func (n *Node) finish(ctx context.Context, ns string, res RaceResult, running time.Time, before int, raceErr error) (RaceResult, error) {
	if !running.IsZero() {
		res.Elapsed = time.Since(running)
	}
	time.Sleep(3 * time.Second) // the sampler's next lines, the kubelet's status and events
	evicted, oomEvent, err := n.raceEvents(ctx, ns)
	if err != nil {
		return res, fmt.Errorf("race events: %w", err)
	}
	res.Evicted, res.OOMKilled = evicted, res.OOMKilled || oomEvent
	switch {
	case slices.Contains(evicted, "agent:stress"):
		res.Evictor = "agent"
	case slices.Contains(evicted, "kubelet:stress") && res.Evictor == "none":
		res.Evictor = "kubelet"
	}
	for _, name := range Neighbours {
		if p, err := n.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{}); err == nil && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			res.Survivors = append(res.Survivors, name)
		}
	}
	if p, err := n.Client.CoreV1().Pods(ns).Get(ctx, "stress", metav1.GetOptions{}); err == nil && oomKilled(p) {
		res.OOMKilled = true
	}
	res.OOMKills = n.lastOOMKills() - before
	res.PeakMiB, res.RateMiBps = rampOf(n.Samples())
	res.Latency, res.LatencySplit, res.LatencyWhy = n.latency(ns+"/stress", res.Evictor)
	return res, raceErr
}

// podState says where a pod that is not Running is: its phase, reason and its containers' waiting or
// terminated reasons.
func podState(p *corev1.Pod) string {
	s := fmt.Sprintf("%s: %s %s", p.Name, p.Status.Phase, p.Status.Reason)
	for _, c := range p.Status.ContainerStatuses {
		switch {
		case c.State.Waiting != nil:
			s += fmt.Sprintf(", %s waiting %s %s", c.Name, c.State.Waiting.Reason, c.State.Waiting.Message)
		case c.State.Terminated != nil:
			s += fmt.Sprintf(", %s terminated %s (exit %d)", c.Name, c.State.Terminated.Reason, c.State.Terminated.ExitCode)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && c.Message != "" {
			s += fmt.Sprintf(", %s: %s", c.Type, c.Message)
		}
	}
	return s
}

func oomKilled(p *corev1.Pod) bool {
	for _, s := range p.Status.ContainerStatuses {
		if t := s.State.Terminated; t != nil && t.Reason == "OOMKilled" {
			return true
		}
		if t := s.LastTerminationState.Terminated; t != nil && t.Reason == "OOMKilled" {
			return true
		}
	}
	return false
}

// sample is one sampler line: guest uptime, memory.current of the pods cgroup, its oom_kill count.
type sample struct {
	at       float64
	current  float64
	oomKills int
}

func parseSample(line string) (sample, bool) {
	f := strings.Fields(strings.TrimPrefix(line, markSample))
	if len(f) < 4 || f[2] != "oom_kill" {
		return sample{}, false
	}
	at, err1 := strconv.ParseFloat(f[0], 64)
	cur, err2 := strconv.ParseFloat(f[1], 64)
	k, err3 := strconv.Atoi(f[3])
	if err1 != nil || err2 != nil || err3 != nil {
		return sample{}, false
	}
	return sample{at: at, current: cur, oomKills: k}, true
}

// PodsCurrent is the pods cgroup's memory.current at the sampler's last line, bytes (0 before the first).
func (n *Node) PodsCurrent() int64 {
	lines := n.Samples()
	for i := len(lines) - 1; i >= 0; i-- {
		if s, ok := parseSample(lines[i]); ok {
			return int64(s.current)
		}
	}
	return 0
}

func (n *Node) lastOOMKills() int {
	lines := n.Samples()
	for i := len(lines) - 1; i >= 0; i-- {
		if s, ok := parseSample(lines[i]); ok {
			return s.oomKills
		}
	}
	return 0
}

// rampOf is the peak of memory.current in MiB and its fastest growth over at least 3 s of samples.
func rampOf(lines []string) (peakMiB, rateMiBps float64) {
	var ss []sample
	for _, l := range lines {
		if s, ok := parseSample(l); ok {
			ss = append(ss, s)
		}
	}
	for i, s := range ss {
		peakMiB = max(peakMiB, s.current/(1<<20))
		for j := i + 1; j < len(ss); j++ {
			if dt := ss[j].at - s.at; dt >= 3 {
				rateMiBps = max(rateMiBps, (ss[j].current-s.current)/(1<<20)/dt)
				break
			}
		}
	}
	return peakMiB, rateMiBps
}
