package agent

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/source"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/procfs"
	"github.com/kube-pressure/pressure/internal/threshold"
)

const mi = int64(1) << 20

var t0 = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

// tree is a cgroup v1 fixture tree (cgroupfs driver) with a pods cgroup limited to podsLimit, written
// below a temporary directory, read through the real source.Node.
type tree struct {
	t         testing.TB
	root      string
	podsLimit int64
	pods      map[string]fixturePod // by UID
}

type fixturePod struct {
	qos   string // "guaranteed", "burstable", "besteffort"
	usage int64
	// procs and threads are the lines of cgroup.procs and tasks (no tasks file when threads is 0).
	procs, threads int
	// pids, when set, are cgroup.procs' lines instead of procs' made-up ones: real processes.
	pids []int
}

// procsFile is the pod's cgroup.procs.
func (p fixturePod) procsFile() string {
	if len(p.pids) == 0 {
		return lines(p.procs, 100)
	}
	var b strings.Builder
	for _, pid := range p.pids {
		fmt.Fprintf(&b, "%d\n", pid)
	}
	return b.String()
}

func newTree(t testing.TB, podsLimit int64) *tree {
	tr := &tree{t: t, root: t.TempDir(), podsLimit: podsLimit, pods: map[string]fixturePod{}}
	tr.write()
	return tr
}

func (tr *tree) mem(rel string, usage, limit int64) { tr.memTasks(rel, usage, limit, "", 0) }

func (tr *tree) memTasks(rel string, usage, limit int64, procs string, threads int) {
	dir := filepath.Join(tr.root, "cgroup", "memory", rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tr.t.Fatal(err)
	}
	files := map[string]string{
		"memory.usage_in_bytes": fmt.Sprint(usage),
		"memory.limit_in_bytes": fmt.Sprint(limit),
		"memory.stat":           "total_inactive_file 0\n",
		"cgroup.procs":          procs,
	}
	if threads > 0 {
		files["tasks"] = lines(threads, 100)
	}
	for name, v := range files {
		writeAtomic(tr.t, filepath.Join(dir, name), v)
	}
}

// writeAtomic replaces a fixture file by a rename, so that an agent reading it concurrently (the level-1
// tests run the agent's loop while the test changes usage) never sees it empty, as it could between
// os.WriteFile's truncate and write; a kernel cgroup file is never empty either.
func writeAtomic(t testing.TB, path, v string) {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(v), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// lines returns n lines of consecutive numbers from first.
func lines(n, first int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%d\n", first+i)
	}
	return b.String()
}

// setPIDs lists real processes in a pod's cgroup.procs.
func (tr *tree) setPIDs(uid string, pids ...int) {
	p := tr.pods[uid]
	p.pids = pids
	tr.pods[uid] = p
	tr.write()
}

// setTasks sets a pod's process and thread counts.
func (tr *tree) setTasks(uid string, procs, threads int) {
	p := tr.pods[uid]
	p.procs, p.threads = procs, threads
	tr.pods[uid] = p
	tr.write()
}

// setPod sets a pod's working set (0 removes nothing; use delete on tr.pods and write).
func (tr *tree) setPod(uid, qos string, usage int64) {
	p := tr.pods[uid]
	p.qos, p.usage = qos, usage
	tr.pods[uid] = p
	tr.write()
}

func (tr *tree) removePod(uid string) {
	p := tr.pods[uid]
	delete(tr.pods, uid)
	if err := os.RemoveAll(filepath.Join(tr.root, "cgroup", "memory", podRel(uid, p.qos))); err != nil {
		tr.t.Fatal(err)
	}
	tr.write()
}

func podRel(uid, qos string) string {
	if qos == "guaranteed" {
		return filepath.Join("kubepods", "pod"+uid)
	}
	return filepath.Join("kubepods", qos, "pod"+uid)
}

func (tr *tree) write() {
	var total int64
	for uid, p := range tr.pods {
		tr.memTasks(podRel(uid, p.qos), p.usage, 1<<62+1, p.procsFile(), p.threads)
		total += p.usage
	}
	tr.mem("", total+512*mi, 1<<62+1)
	tr.mem("kubepods", total, tr.podsLimit)
	tr.mem("kubepods/burstable", 0, 1<<62+1)
	tr.mem("kubepods/besteffort", 0, 1<<62+1)
}

// node returns the real node reader over the fixture tree (procfs from the procfs package's fixture).
func (tr *tree) node() *source.Node {
	l, err := cgroupfs.Detector{Root: filepath.Join(tr.root, "cgroup"),
		Magic: func(string) (int64, error) { return 0, fmt.Errorf("fixture") }}.Detect()
	if err != nil {
		tr.t.Fatal(err)
	}
	return &source.Node{Proc: procfs.NewReader("../source/procfs/testdata/proc-k6.18.44"), Cgroup: &cgroupfs.Reader{Layout: l}}
}

// pod builds an API pod. mem is the memory request (and limit for guaranteed), "" for none.
func pod(name, uid, qos, mem string, opts ...func(*corev1.Pod)) *corev1.Pod {
	c := corev1.Container{Name: "app"}
	switch qos {
	case "guaranteed":
		rl := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourceCPU: resource.MustParse("100m")}
		c.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl}
	case "burstable":
		c.Resources = corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}}
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid),
			CreationTimestamp: metav1.NewTime(t0.Add(-time.Hour))},
		Spec:   corev1.PodSpec{NodeName: "node-a", Containers: []corev1.Container{c}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, QOSClass: corev1.PodQOSClass(strings.ToUpper(qos[:1]) + qos[1:])},
	}
	if qos == "besteffort" {
		p.Status.QOSClass = corev1.PodQOSBestEffort
	}
	for _, o := range opts {
		o(p)
	}
	return p
}

func priority(v int32) func(*corev1.Pod) { return func(p *corev1.Pod) { p.Spec.Priority = ptr.To(v) } }

func terminating(p *corev1.Pod) {
	ts := metav1.NewTime(t0)
	p.DeletionTimestamp = &ts
}

// fakePods is a podLister over a slice.
type fakePods struct {
	mu   sync.Mutex
	pods []*corev1.Pod
}

func (f *fakePods) List() ([]*corev1.Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*corev1.Pod(nil), f.pods...), nil
}

func (f *fakePods) set(pods ...*corev1.Pod) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pods = pods
}

// recordingLadder records requests and answers with the next of results, else with outcome (default
// evicted).
type recordingLadder struct {
	mu       sync.Mutex
	requests []actuate.Request
	results  []actuate.Result
	finals   []actuate.Result // the final results of Continuing results, in order
	hold     chan struct{}    // when set, a background ladder reports its final result once it is closed
	outcome  actuate.Outcome
}

// EvictThen answers at once, as Evict; a result with Continuing set calls later with finals' next
// (or an eviction) in a goroutine, as the real ladder does after a PDB refusal.
func (r *recordingLadder) EvictThen(ctx context.Context, req actuate.Request, later func(actuate.Result, error)) (actuate.Result, error) {
	res, err := r.Evict(ctx, req)
	if res.Continuing && later != nil {
		r.mu.Lock()
		final := actuate.Result{Outcome: actuate.OutcomeEvicted, Rung: actuate.RungDelete}
		if len(r.finals) > 0 {
			final, r.finals = r.finals[0], r.finals[1:]
		}
		hold := r.hold
		r.mu.Unlock()
		go func() {
			if hold != nil {
				<-hold
			}
			later(final, nil)
		}()
	}
	return res, err
}

func (r *recordingLadder) Evict(_ context.Context, req actuate.Request) (actuate.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
	if len(r.results) > 0 {
		res := r.results[0]
		r.results = r.results[1:]
		return res, nil
	}
	o := r.outcome
	if o == "" {
		o = actuate.OutcomeEvicted
	}
	rung := actuate.RungEviction
	if o == actuate.OutcomeDryRun {
		rung = actuate.RungNone
	}
	return actuate.Result{Outcome: o, Rung: rung, Attempts: []actuate.Attempt{{Rung: rung, Outcome: o}}}, nil
}

func (r *recordingLadder) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, q := range r.requests {
		out = append(out, q.Pod.Name)
	}
	return out
}

// recordingEvents records node events.
type recordingEvents struct{ events []string }

func (e *recordingEvents) PressureStarted(sig, observed, thr string) {
	e.events = append(e.events, fmt.Sprintf("started %s observed %s threshold %s", sig, observed, thr))
}

func (e *recordingEvents) PressureEnded(sig, observed string) {
	e.events = append(e.events, fmt.Sprintf("ended %s observed %s", sig, observed))
}

// recordingKiller records cgroup kills by pod UID.
type recordingKiller struct{ killed []types.UID }

func (k *recordingKiller) KillPod(uid types.UID) (int, error) {
	k.killed = append(k.killed, uid)
	return 1, nil
}

// kubeletConfig parses eviction settings like a kubelet config file with evictionHard set.
func kubeletConfig(t testing.TB, hard map[string]string) threshold.Config {
	t.Helper()
	cfg, err := threshold.ParseConfig(threshold.Input{EvictionHard: hard, EvictionHardSet: true})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

type harness struct {
	agent  *Agent
	tree   *tree
	clock  *testingclock.FakeClock
	pods   *fakePods
	ladder *recordingLadder
	events *recordingEvents
	killer *recordingKiller
	reg    *prometheus.Registry
}

// newHarness builds an agent over a 2Gi pods cgroup whose kubelet has allocatableMemory.available<100Mi
// (and memory.available<100Mi).
func newHarness(t testing.TB, mutate func(*Settings)) *harness {
	t.Helper()
	h := &harness{tree: newTree(t, 2048*mi), clock: testingclock.NewFakeClock(t0), pods: &fakePods{},
		ladder: &recordingLadder{}, events: &recordingEvents{}, killer: &recordingKiller{}, reg: prometheus.NewRegistry()}
	m, err := NewMetrics(h.reg, "") // no node label: the golden metric texts stay short (metrics_test.go checks it)
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings("node-a")
	if mutate != nil {
		mutate(&s)
	}
	h.agent = &Agent{Settings: s, KubeletConfig: kubeletConfig(t, map[string]string{"memory.available": "100Mi"}),
		Clock: h.clock, Source: h.tree.node(), Pods: h.pods, Ladder: h.ladder, Killer: h.killer, Events: h.events, Metrics: m}
	return h
}

// sync advances the clock by d and runs one sync.
func (h *harness) sync(d time.Duration) syncResult {
	h.clock.Step(d)
	return h.agent.sync(context.Background(), TriggerNotify)
}

// trace renders what a sync's plan says of why: the core's trace, then the policy's.
func (r syncResult) trace() string { return r.Plan.Decision.Trace.String() + r.Plan.Trace.String() }
