package e2e

// Level-2 agreement of internal/source with the kubelet: on the package's real node, our observations
// (read from /proc, the cgroup v1 memory controller and statfs, exactly as the agent reads them) are
// compared with the kubelet's own /stats/summary taken at the same moment.
//
// The kubelet's memory, filesystem and per-pod values come from cAdvisor's cache, refreshed by
// housekeeping every 10-15 s, and carry the time cAdvisor read them (truncated to the second in JSON).
// So we sample our own snapshot every sampleEvery for longer than that, fetch the summary, and compare
// each of the kubelet's values with our samples taken while cAdvisor was reading: the kubelet's value
// must lie within [min−δ, max+δ] of ours over that window. pid.available is read live by the summary
// handler, so its window is the request itself.

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/kubeconv"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/source/statfs"
	"github.com/kube-pressure/pressure/test/images"
)

const (
	// sampleEvery is how often we take our snapshot while waiting for the summary.
	sampleEvery = 100 * time.Millisecond
	// sampleBefore exceeds cAdvisor's longest housekeeping interval (15 s), so the kubelet's cached
	// values were read while we were sampling.
	sampleBefore = 20 * time.Second
	// summaryRounds summaries are taken summaryGap apart, so they meet cAdvisor at different phases.
	summaryRounds = 3
	summaryGap    = 7 * time.Second
)

// Tolerances (δ), see docs/signals.md "Agreement with the kubelet". Both sides read the same files
// with the same formula; δ covers what moves between two of our samples (other processes on this
// shared machine allocate memory, write files and start threads) and the slack of the timestamp.
var sourcesTolerance = map[signal.Signal]int64{
	signal.MemoryAvailable:            32 << 20,
	signal.AllocatableMemoryAvailable: 8 << 20,
	signal.NodeFsAvailable:            64 << 20,
	signal.NodeFsInodesFree:           2000,
	signal.ImageFsAvailable:           64 << 20,
	signal.ImageFsInodesFree:          2000,
	signal.ContainerFsAvailable:       64 << 20,
	signal.ContainerFsInodesFree:      2000,
	signal.PIDAvailable:               200,
}

// podTolerance is δ for the working set of a pod that holds its memory.
const podTolerance = 4 << 20

// sourcesPod runs stress with args, tolerating every taint (other tests may leave the agent's).
func sourcesPod(ns, name string, args []string, request, limit string) *corev1.Pod {
	c := corev1.Container{Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever, Args: args}
	if request != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(request)}
	}
	if limit != "" {
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(limit), corev1.ResourceCPU: resource.MustParse("50m")}
		c.Resources.Requests = c.Resources.Limits
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c},
			Tolerations: tolerateAll(), TerminationGracePeriodSeconds: ptr.To[int64](2)},
	}
}

// holdingPod is a stress pod that allocates target bytes and holds them.
type holdingPod struct {
	pod    *corev1.Pod
	target int64
}

// ourSample is one of our snapshots and when it was taken.
type ourSample struct {
	at   time.Time
	snap signal.Snapshot
}

// sampler takes our snapshot every sampleEvery until stopped.
type sampler struct {
	mu      sync.Mutex
	samples []ourSample
	errs    map[string]int
	stop    chan struct{}
	once    sync.Once
	done    chan struct{}
}

func startSampler(node *source.Node) *sampler {
	s := &sampler{errs: map[string]int{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			now := time.Now()
			snap, err := node.Snapshot(now)
			s.mu.Lock()
			s.samples = append(s.samples, ourSample{at: now, snap: snap})
			if err != nil {
				s.errs[err.Error()]++
			}
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// finish stops the sampler (once) and returns what it took.
func (s *sampler) finish() ([]ourSample, map[string]int) {
	s.once.Do(func() { close(s.stop) })
	<-s.done
	return s.samples, s.errs
}

// bounds is the range of our values of one quantity over a window.
type bounds struct {
	min, max int64
	n        int
	nearest  int64 // our value closest in time to the window's centre
}

// within collects value(sample) over samples taken in [from, to]; ok is false when no sample there has one.
func within(samples []ourSample, from, to time.Time, value func(signal.Snapshot) (int64, bool)) (bounds, bool) {
	var b bounds
	centre := from.Add(to.Sub(from) / 2)
	best := time.Duration(1<<63 - 1)
	for _, s := range samples {
		if s.at.Before(from) || s.at.After(to) {
			continue
		}
		v, ok := value(s.snap)
		if !ok {
			continue
		}
		if b.n == 0 || v < b.min {
			b.min = v
		}
		if b.n == 0 || v > b.max {
			b.max = v
		}
		b.n++
		if d := s.at.Sub(centre).Abs(); d < best {
			best, b.nearest = d, v
		}
	}
	return b, b.n > 0
}

// cadvisorWindow is when a value stamped at (JSON-truncated) t was read: [t, t+1s), with slack.
func cadvisorWindow(t time.Time) (time.Time, time.Time) {
	return t.Add(-200 * time.Millisecond), t.Add(time.Second + 200*time.Millisecond)
}

// outside is how far v lies outside [b.min, b.max] (0 inside).
func outside(v int64, b bounds) int64 {
	switch {
	case v < b.min:
		return b.min - v
	case v > b.max:
		return v - b.max
	}
	return 0
}

func fetchSummary(ctx context.Context, t *testing.T, e *env) *statsv1alpha1.Summary {
	t.Helper()
	raw, err := e.client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", e.node.Name(), "proxy", "stats", "summary").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET node proxy stats/summary: %v: %s", err, raw)
	}
	var s statsv1alpha1.Summary
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("decode stats/summary: %v", err)
	}
	return &s
}

// waitHolding waits until the stress pod logs that it reached its target and holds.
func waitHolding(ctx context.Context, t *testing.T, e *env, ns, name string) {
	t.Helper()
	poll(ctx, t, "pod "+ns+"/"+name+" holding", func() (bool, string) {
		raw, err := e.client.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(string(raw), `"event":"hold"`), string(raw)
	})
}

func TestSourcesAgreeWithKubeletSummary(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e) // an earlier test's taint or pods
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "sources")
	// One pod per QoS class, each holding a known amount of anonymous memory.
	pods := map[string]holdingPod{
		"besteffort": {sourcesPod(ns, "besteffort", []string{"mem", "--rate", "0", "--target", "200Mi"}, "", ""), 200 << 20},
		"burstable":  {sourcesPod(ns, "burstable", []string{"mem", "--rate", "0", "--target", "120Mi"}, "100Mi", ""), 120 << 20},
		"guaranteed": {sourcesPod(ns, "guaranteed", []string{"mem", "--rate", "0", "--target", "150Mi"}, "", "300Mi"), 150 << 20},
	}
	names := make([]string, 0, len(pods))
	for name := range pods {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		createPod(ctx, t, e, pods[name].pod)
	}
	uids := map[string]string{}
	for _, name := range names {
		waitHolding(ctx, t, e, ns, name)
		p, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		uids[name] = string(p.UID)
	}

	// Several summaries, cached at different phases of cAdvisor's housekeeping, against one run of samples.
	s := startSampler(ourNode(t, e))
	defer s.finish() // a failed fetch must not leave the sampler running
	type fetched struct {
		t0, t1  time.Time
		summary *statsv1alpha1.Summary
	}
	var got []fetched
	for i := range summaryRounds {
		if i == 0 {
			time.Sleep(sampleBefore)
		} else {
			time.Sleep(summaryGap)
		}
		t0 := time.Now()
		summary := fetchSummary(ctx, t, e)
		got = append(got, fetched{t0, time.Now(), summary})
	}
	time.Sleep(2 * time.Second)
	samples, errs := s.finish()
	msgs := make([]string, 0, len(errs))
	for msg := range errs {
		msgs = append(msgs, msg)
	}
	sort.Strings(msgs)
	for _, msg := range msgs {
		t.Logf("our snapshot error (%d of %d samples): %s", errs[msg], len(samples), msg)
	}
	t.Logf("%d samples of ours from %s to %s", len(samples), samples[0].at.UTC().Format(time.RFC3339Nano),
		samples[len(samples)-1].at.UTC().Format(time.RFC3339Nano))
	for i, f := range got {
		t.Logf("summary %d requested %s, answered %s", i+1, f.t0.UTC().Format(time.RFC3339Nano), f.t1.UTC().Format(time.RFC3339Nano))
		kubelet := kubeconv.Snapshot(f.summary)
		compareSignals(t, kubelet, samples, f.t0, f.t1)
		comparePods(t, kubelet, samples, f.t1, names, uids, pods)
	}
	explainLocalRanksThePods(ctx, t, e, ns)
}

// ourNode is the agent's view of the package node: the real /proc and /sys/fs/cgroup, the kubelet root
// dir and containerd's root of the harness.
func ourNode(t *testing.T, e *env) *source.Node {
	t.Helper()
	layout, err := cgroupfs.Detector{Root: cgroupfs.DefaultRoot}.Detect()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := filepath.Join(layout.Memory, layout.PodsCgroup), e.node.PodsMemoryCgroupDir(); got != want {
		t.Fatalf("detected pods cgroup %s (%s), want the node's %s", got, layout, want)
	}
	return &source.Node{
		Proc:   procfs.NewReader(procfs.DefaultRoot),
		Cgroup: &cgroupfs.Reader{Layout: layout},
		Disk: &statfs.Reader{NodefsPath: e.node.KubeletRootDir(),
			ImagefsPath: filepath.Join(e.node.Cleanup().Dir, "containerd", "root"), Statfser: statfs.Unix{}},
	}
}

func compareSignals(t *testing.T, kubelet signal.Snapshot, samples []ourSample, t0, t1 time.Time) {
	for _, sig := range signal.All() {
		k, ok := kubelet.Observations[sig]
		if !ok {
			t.Errorf("%s: the kubelet's summary has no observation", sig)
			continue
		}
		delta, ok := sourcesTolerance[sig]
		if !ok {
			t.Fatalf("%s: no tolerance", sig)
		}
		from, to := cadvisorWindow(readAt(kubelet, sig, k))
		if sig == signal.PIDAvailable { // read live by the summary handler
			from, to = t0.Add(-200*time.Millisecond), t1.Add(200*time.Millisecond)
		}
		if from.Before(samples[0].at) {
			t.Errorf("%s: the kubelet's value is from %s, before our first sample %s", sig, k.Time.UTC().Format(time.RFC3339), samples[0].at.UTC().Format(time.RFC3339Nano))
			continue
		}
		avail, okA := within(samples, from, to, observed(sig, func(o signal.Observation) int64 { return o.Available }))
		capa, okC := within(samples, from, to, observed(sig, func(o signal.Observation) int64 { return o.Capacity }))
		if !okA || !okC {
			t.Errorf("%s: none of our samples in [%s, %s] observed it", sig, from.UTC().Format(time.RFC3339Nano), to.UTC().Format(time.RFC3339Nano))
			continue
		}
		off := outside(k.Available, avail)
		t.Logf("%-28s kubelet %d (age %s) ours [%d, %d] over %d samples, nearest %d: kubelet−nearest %+d, outside range by %d (δ %d); capacity kubelet %d ours [%d, %d]",
			sig, k.Available, t1.Sub(k.Time).Round(time.Second), avail.min, avail.max, avail.n, avail.nearest,
			k.Available-avail.nearest, off, delta, k.Capacity, capa.min, capa.max)
		if off > delta {
			t.Errorf("%s: kubelet %d lies %d outside our [%d, %d] (δ %d)", sig, k.Available, off, avail.min, avail.max, delta)
		}
		// Capacity is MemTotal, the pods cgroup limit, f_blocks×f_frsize, f_files or min(pid_max,
		// threads-max) on both sides: it must be equal.
		if capa.min != capa.max || k.Capacity != capa.min {
			t.Errorf("%s: capacity kubelet %d, ours [%d, %d]: want equal", sig, k.Capacity, capa.min, capa.max)
		}
	}
}

// readAt is when the kubelet read sig's value. The CRI stats provider stamps imagefs (and
// containerfs, the same FsStats) with containerd's image-usage time, but takes their bytes and inodes
// from cAdvisor's cached filesystem stats of the root container, the same read as nodefs: that read's
// time is nodefs's.
func readAt(kubelet signal.Snapshot, sig signal.Signal, k signal.Observation) time.Time {
	switch sig {
	case signal.ImageFsAvailable, signal.ImageFsInodesFree, signal.ContainerFsAvailable, signal.ContainerFsInodesFree:
		if n, ok := kubelet.Observations[signal.NodeFsAvailable]; ok {
			return n.Time
		}
	}
	return k.Time
}

func observed(sig signal.Signal, f func(signal.Observation) int64) func(signal.Snapshot) (int64, bool) {
	return func(s signal.Snapshot) (int64, bool) {
		o, ok := s.Observations[sig]
		return f(o), ok
	}
}

func comparePods(t *testing.T, kubelet signal.Snapshot, samples []ourSample, t1 time.Time, names []string,
	uids map[string]string, pods map[string]holdingPod) {
	for _, name := range names {
		uid := uids[name]
		k, ok := kubelet.Pods[uid]
		if !ok || k.MemoryWorkingSet == nil {
			t.Errorf("pod %s (%s): no working set in the kubelet's summary", name, uid)
			continue
		}
		from, to := cadvisorWindow(k.Time)
		if from.Before(samples[0].at) {
			t.Errorf("pod %s: the kubelet's value is from %s, before our first sample", name, k.Time.UTC().Format(time.RFC3339))
			continue
		}
		ws, ok := within(samples, from, to, func(s signal.Snapshot) (int64, bool) {
			p, ok := s.Pods[uid]
			if !ok || p.MemoryWorkingSet == nil {
				return 0, false
			}
			return int64(*p.MemoryWorkingSet), true
		})
		if !ok {
			t.Errorf("pod %s: none of our samples near %s has its working set", name, k.Time.UTC().Format(time.RFC3339))
			continue
		}
		kv := int64(*k.MemoryWorkingSet)
		off := outside(kv, ws)
		t.Logf("pod %-10s kubelet %d (age %s) ours [%d, %d] over %d samples: kubelet−nearest %+d, outside range by %d (δ %d)",
			name, kv, t1.Sub(k.Time).Round(time.Second), ws.min, ws.max, ws.n, kv-ws.nearest, off, int64(podTolerance))
		if off > podTolerance {
			t.Errorf("pod %s: kubelet working set %d lies %d outside our [%d, %d] (δ %d)", name, kv, off, ws.min, ws.max, int64(podTolerance))
		}
		// The pod holds its target: a working set below it means we read the wrong cgroup.
		if target := pods[name].target; ws.min < target {
			t.Errorf("pod %s: our working set %d is below the %d it holds", name, ws.min, target)
		}
	}
}
