package agent

// Level-1 tests: the whole agent (RunWithOptions: informer, ladder, ledger, taint, events, metrics)
// against a real kube-apiserver, etcd, controller manager and scheduler (test/cluster). Pods are bound
// to a Node object no kubelet serves; the node is read from a cgroup v1 fixture tree whose pod cgroups
// carry the API pods' UIDs, so the test decides the memory each pod uses.

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/evictaudit"
)

func TestAgentOnControlPlane(t *testing.T) {
	audit, auditLog, err := evictaudit.WritesArgs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cp := clustertest.ControlPlane(t, clustertest.WithOptions(func(o *cluster.ControlPlaneOptions) {
		o.ExtraAPIServerArgs = append(o.ExtraAPIServerArgs, audit...)
	}))
	client, err := cp.Client()
	if err != nil {
		t.Fatalf("client: %v", err)
	}
	rc := cp.RESTConfig()
	t.Run("evicts the stress pod through the Eviction API, taints the node and says why", func(t *testing.T) {
		testEvictsOnFakeNode(t, rc, client)
	})
	t.Run("dry-run evicts nothing, taints nothing, writes no pod, node or ConfigMap (audit log) and reports what it would do", func(t *testing.T) {
		testDryRun(t, rc, client, auditLog)
	})
	t.Run("a restarted agent with the persisted ledger does not evict twice", func(t *testing.T) {
		testRestart(t, rc, client)
	})
	t.Run("a missing kubelet config file: the agent stops, its log and a Node Event name the value to set", func(t *testing.T) {
		testPreflightMissingKubeletFile(t, rc, client)
	})
	t.Run("the API server stopped for 20s: the agent keeps observing and then evicts once", func(t *testing.T) {
		testAPIOutage(t, rc, client, func() error { return cp.StopAPIServer() },
			func(ctx context.Context) error { return cp.StartAPIServer(ctx) })
	})
}

// world is one fake node: a Node object, a namespace, and the fixture tree the agent reads.
type world struct {
	t      *testing.T
	client kubernetes.Interface
	node   string
	ns     string
	tree   *tree
	kcfg   string
	// logs holds what every agent started by start logged.
	logs lockedBuffer
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newWorld(t *testing.T, client kubernetes.Interface, name string) *world {
	ctx := context.Background()
	w := &world{t: t, client: client, node: name, ns: name, tree: newTree(t, 2048*mi)}
	if _, err := client.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	w.kcfg = filepath.Join(t.TempDir(), "kubelet.yaml")
	kc := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n  memory.available: 100Mi\n  allocatableMemory.available: 100Mi\n"
	if err := os.WriteFile(w.kcfg, []byte(kc), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// pod creates a pod bound to the node (with a finalizer, so an evicted pod stays listed, terminating, as
// it would while a kubelet stops it) and gives its cgroup usage bytes.
func (w *world) pod(name, qos, mem string, usage int64) *corev1.Pod {
	p := pod(name, "", qos, mem)
	p.Namespace, p.UID, p.Spec.NodeName = w.ns, "", w.node
	p.Finalizers = []string{"pressure.test/hold"}
	p.Spec.Containers[0].Image = "pressure.local/pause:v1"
	p.Status = corev1.PodStatus{}
	got, err := w.client.CoreV1().Pods(w.ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	w.tree.setPod(string(got.UID), qosDir(got), usage)
	return got
}

func qosDir(p *corev1.Pod) string {
	switch p.Status.QOSClass {
	case corev1.PodQOSGuaranteed:
		return "guaranteed"
	case corev1.PodQOSBurstable:
		return "burstable"
	}
	return "besteffort"
}

func (w *world) config(dryRun bool) Config {
	cfg := DefaultConfig(w.node)
	cfg.KubeletConfigFile = w.kcfg
	cfg.CgroupRoot = filepath.Join(w.tree.root, "cgroup")
	cfg.ProcRoot = "../source/procfs/testdata/proc-k6.18.44"
	cfg.NodefsPath = ""
	cfg.MetricsAddr, cfg.HealthAddr = "127.0.0.1:0", "127.0.0.1:0"
	cfg.Notifiers = Notifiers{PollInterval: 50 * time.Millisecond, PollDelta: 16 * mi}
	cfg.Settings.SyncPeriod = time.Second
	cfg.Settings.DryRun, cfg.Ladder.DryRun = dryRun, dryRun
	cfg.Settings.TaintHysteresis = 2 * time.Second
	return cfg
}

// running is one agent started by start.
type running struct {
	cancel  context.CancelFunc
	done    chan error
	reg     *prometheus.Registry
	metrics string
	health  string
}

func (w *world) start(cfg Config, rc *rest.Config) *running {
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan error, 1), reg: prometheus.NewRegistry()}
	addrs := make(chan [2]string, 1)
	log := slog.New(slog.NewTextHandler(io.MultiWriter(testWriter{w.t}, &w.logs), &slog.HandlerOptions{Level: slog.LevelInfo}))
	go func() {
		r.done <- RunWithOptions(ctx, cfg, Options{RESTConfig: rc, Registry: r.reg, Logger: log,
			OnListen: func(m, h string) { addrs <- [2]string{m, h} }})
	}()
	select {
	case a := <-addrs:
		r.metrics, r.health = a[0], a[1]
	case err := <-r.done:
		w.t.Fatalf("agent exited at start: %v", err)
	}
	w.t.Cleanup(func() { r.stop(w.t) })
	return r
}

func (r *running) stop(t *testing.T) {
	if r.cancel == nil {
		return
	}
	r.cancel()
	r.cancel = nil
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("agent returned %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Errorf("agent did not stop within 30s")
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func eventually(t *testing.T, d time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %v", what, d, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (w *world) terminating() map[string]bool {
	list, err := w.client.CoreV1().Pods(w.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range list.Items {
		out[p.Name] = p.DeletionTimestamp != nil
	}
	return out
}

func (w *world) events(reason string) []corev1.Event {
	sel := fields.OneTermEqualSelector("reason", reason).String()
	list, err := w.client.CoreV1().Events("").List(context.Background(), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		w.t.Fatal(err)
	}
	var out []corev1.Event
	for _, e := range list.Items {
		if e.InvolvedObject.Namespace == w.ns || e.InvolvedObject.Name == w.node {
			out = append(out, e)
		}
	}
	return out
}

func (w *world) tainted() bool {
	n, err := w.client.CoreV1().Nodes().Get(context.Background(), w.node, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	for _, tn := range n.Spec.Taints {
		if tn.Key == loopbreaker.TaintKey && tn.Effect == corev1.TaintEffectNoSchedule {
			return true
		}
	}
	return false
}

func get(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// counter sums the samples of a counter whose labels include every label of want.
func counter(reg *prometheus.Registry, name string, want ...string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		return -1
	}
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				if hasLabels(m.GetLabel(), want) {
					sum += m.GetCounter().GetValue()
				}
			}
		}
	}
	return sum
}

// hasLabels reports whether labels include every name=value pair of want ("outcome", "evicted", ...).
func hasLabels(labels []*dto.LabelPair, want []string) bool {
	for i := 0; i+1 < len(want); i += 2 {
		found := false
		for _, l := range labels {
			found = found || (l.GetName() == want[i] && l.GetValue() == want[i+1])
		}
		if !found {
			return false
		}
	}
	return true
}

// gauge returns the value of a gauge sample with the given labels, or -1.
func gaugeValue(reg *prometheus.Registry, name string, want ...string) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		return -1
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m.GetLabel(), want) {
				return m.GetGauge().GetValue()
			}
		}
	}
	return -1
}
