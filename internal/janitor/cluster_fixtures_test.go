package janitor_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	config "github.com/kube-pressure/pressure/internal/config/janitor"
	"github.com/kube-pressure/pressure/internal/janitor"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// evictionMessage is what the kubelet writes for a memory-pressure eviction.
const evictionMessage = "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. " +
	"Container app was using 300Mi, request is 100Mi, has larger consumption of memory. "

// fixtures creates objects the way the control plane and the kubelet would.
type fixtures struct {
	t      *testing.T
	client kubernetes.Interface
	node   string
}

// on returns the fixtures reporting to t (a subtest).
func (f *fixtures) on(t *testing.T) *fixtures {
	g := *f
	g.t = t
	return &g
}

func newFixtures(t *testing.T, client kubernetes.Interface, node string) *fixtures {
	t.Helper()
	f := &fixtures{t: t, client: client, node: node}
	_, err := client.CoreV1().Nodes().Create(context.Background(), &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: node}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create fake node %s: %v", node, err)
	}
	return f
}

func (f *fixtures) namespace(name string) {
	f.t.Helper()
	_, err := f.client.CoreV1().Namespaces().Create(context.Background(), &v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create namespace %s: %v", name, err)
	}
}

// deployment creates a paused, scaled-to-zero Deployment and a ReplicaSet it controls, so the
// workload controllers never create or delete pods of their own; it returns the ReplicaSet.
func (f *fixtures) deployment(ns, name string) (*appsv1.Deployment, *appsv1.ReplicaSet) {
	f.t.Helper()
	ctx := context.Background()
	labels := map[string]string{"app": name}
	tmpl := v1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec("")}
	d, err := f.client.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](0), Paused: true,
			Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
	}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create deployment %s/%s: %v", ns, name, err)
	}
	rs, err := f.client.AppsV1().ReplicaSets(ns).Create(ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name + "-7d9f", Labels: labels, OwnerReferences: []metav1.OwnerReference{
			{APIVersion: "apps/v1", Kind: "Deployment", Name: d.Name, UID: d.UID, Controller: ptr.To(true)},
		}},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To[int32](0), Selector: &metav1.LabelSelector{MatchLabels: labels}, Template: tmpl},
	}, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create replicaset %s/%s: %v", ns, name, err)
	}
	return d, rs
}

func podSpec(node string) v1.PodSpec {
	return v1.PodSpec{NodeName: node, Containers: []v1.Container{{
		Name: "app", Image: "pause:test",
		Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceMemory: mustQ("100Mi")},
			Limits:   v1.ResourceList{v1.ResourceMemory: mustQ("200Mi")},
		},
	}}}
}

type podOpt func(*v1.Pod)

func ownedByRS(rs *appsv1.ReplicaSet) podOpt {
	return func(p *v1.Pod) {
		p.Labels = map[string]string{"app": rs.Labels["app"]}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}
	}
}

func labelled(k, v string) podOpt {
	return func(p *v1.Pod) {
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[k] = v
	}
}

func annotated(k, v string) podOpt {
	return func(p *v1.Pod) { p.Annotations = map[string]string{k: v} }
}

// pod creates a pod bound to the fake node; it stays Pending (no kubelet).
func (f *fixtures) pod(ns, name string, opts ...podOpt) *v1.Pod {
	f.t.Helper()
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: podSpec(f.node)}
	for _, o := range opts {
		o(p)
	}
	got, err := f.client.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		f.t.Fatalf("create pod %s/%s: %v", ns, name, err)
	}
	return got
}

// setPhase writes the status a kubelet writes: Running, or Failed/Evicted at evictedAt with the
// DisruptionTarget condition (the pod started an hour before).
// Control-plane controllers may touch the pod in between: retry on conflicts with the latest version.
func setStatus(ctx context.Context, c kubernetes.Interface, p *v1.Pod, phase v1.PodPhase, evictedAt time.Time) (*v1.Pod, error) {
	var got *v1.Pod
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		latest, err := c.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		got, err = updateStatus(ctx, c, latest, phase, evictedAt)
		return err
	})
	return got, err
}

func updateStatus(ctx context.Context, c kubernetes.Interface, p *v1.Pod, phase v1.PodPhase, evictedAt time.Time) (*v1.Pod, error) {
	p = p.DeepCopy()
	start := metav1.NewTime(evictedAt.Add(-time.Hour))
	p.Status = v1.PodStatus{Phase: phase, StartTime: &start}
	if phase == v1.PodFailed {
		p.Status.Reason, p.Status.Message = janitor.ReasonEvicted, evictionMessage
		p.Status.Conditions = []v1.PodCondition{{Type: v1.DisruptionTarget, Status: v1.ConditionTrue,
			Reason: "TerminationByKubelet", Message: evictionMessage, LastTransitionTime: metav1.NewTime(evictedAt)}}
		p.Status.ContainerStatuses = []v1.ContainerStatus{{Name: "app", Image: "pause:test", State: v1.ContainerState{
			Terminated: &v1.ContainerStateTerminated{ExitCode: 137, Reason: "Error", StartedAt: start, FinishedAt: metav1.NewTime(evictedAt)},
		}}}
	}
	return c.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, p, metav1.UpdateOptions{})
}

func (f *fixtures) evicted(ns, name string, evictedAt time.Time, opts ...podOpt) *v1.Pod {
	f.t.Helper()
	p, err := setStatus(context.Background(), f.client, f.pod(ns, name, opts...), v1.PodFailed, evictedAt)
	if err != nil {
		f.t.Fatalf("evict pod %s/%s: %v", ns, name, err)
	}
	return p
}

func (f *fixtures) running(ns, name string) *v1.Pod {
	f.t.Helper()
	p, err := setStatus(context.Background(), f.client, f.pod(ns, name), v1.PodRunning, time.Now())
	if err != nil {
		f.t.Fatalf("set pod %s/%s running: %v", ns, name, err)
	}
	return p
}

// withoutWorkloadControllers keeps kube-controller-manager's ReplicaSet and Deployment
// controllers off: they would delete our fixture pods while still Pending (a ReplicaSet scaled to
// zero) or create replacements. The garbage collector and the pod GC still run.
func withoutWorkloadControllers() clustertest.Option {
	return clustertest.WithOptions(func(o *cluster.ControlPlaneOptions) {
		o.ExtraControllerManagerArgs = append(o.ExtraControllerManagerArgs, "--controllers=*,-replicaset-controller,-deployment-controller")
	})
}

// testConfig is a valid Config for one test: no servers, no leader election.
func testConfig(ttl time.Duration, namespaces ...string) config.Config {
	c := &config.JanitorConfiguration{}
	config.SetDefaults(c)
	cfg := config.Convert(c)
	cfg.TTL, cfg.Namespaces = ttl, namespaces
	cfg.DeletionsPerSec, cfg.Burst = 500, 500
	cfg.LeaderElection.Enabled = false
	cfg.MetricsAddr, cfg.HealthProbeAddr = "0", "0"
	return cfg
}

// startJanitor runs a janitor until the test ends; the returned wait stops it and returns Run's error.
func startJanitor(t *testing.T, cfg config.Config, opts janitor.Options) (stop func() error) {
	t.Helper()
	return startJanitorTolerating(t, cfg, opts, nil)
}

// startJanitorTolerating is startJanitor where Run may also end with the error tolerated.
func startJanitorTolerating(t *testing.T, cfg config.Config, opts janitor.Options, tolerated error) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var (
		once sync.Once
		err  error
		done = make(chan struct{})
	)
	go func() { defer close(done); err = janitor.RunWithOptions(ctx, cfg, opts) }()
	stop = func() error {
		once.Do(func() { cancel(); <-done })
		return err
	}
	t.Cleanup(func() {
		if err := stop(); err != nil && (tolerated == nil || !errors.Is(err, tolerated)) {
			t.Errorf("janitor %s: %v", opts.Identity, err)
		}
	})
	return stop
}

// testLogger writes the janitor's log to the test log while the test runs.
func testLogger(t *testing.T, name string) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(w.close)
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug})).With("replica", name)
}

type testWriter struct {
	mu     sync.Mutex
	t      *testing.T
	closed bool
}

func (w *testWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed && testing.Verbose() {
		w.t.Log(string(b[:len(b)-1]))
	}
	return len(b), nil
}

func (w *testWriter) close() { w.mu.Lock(); w.closed = true; w.mu.Unlock() }

var _ io.Writer = (*testWriter)(nil)

// eventually polls cond every 100ms until it returns nil or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s: %v", timeout, what, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// podNames lists the pods of namespace ns.
func podNames(ctx context.Context, c kubernetes.Interface, ns string) (map[string]bool, error) {
	list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, p := range list.Items {
		names[p.Name] = true
	}
	return names, nil
}

func mustQ(s string) resource.Quantity { return resource.MustParse(s) }

type restConfig = *rest.Config
