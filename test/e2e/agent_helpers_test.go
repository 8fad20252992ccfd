package e2e

// Helpers of the pressure-agent end-to-end tests (agent_test.go): the agent runs in the test process
// (agent.RunWithOptions) against the package's real node: its cgroup v1 memory controller, /proc, the
// kubelet's /configz, and the API server.

import (
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
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/test/evictaudit"
	"github.com/kube-pressure/pressure/test/images"
	"github.com/kube-pressure/pressure/test/oomkill"
)

// agentRun is one in-process agent.
type agentRun struct {
	cancel  context.CancelFunc
	done    chan error
	reg     *prometheus.Registry
	metrics string
	health  string
	logPath string
}

// startAgent runs the agent on the package node with the defaults (thresholds from the kubelet's
// /configz, every notifier) and mutate's changes. The agent's JSON log goes to a file whose tail is
// printed when the test fails.
func startAgent(t *testing.T, e *env, mutate func(*agent.Config)) *agentRun {
	t.Helper()
	cfg := agent.DefaultConfig(e.node.Name())
	cfg.NodefsPath = e.node.KubeletRootDir()
	cfg.MetricsAddr, cfg.HealthAddr = "127.0.0.1:0", "127.0.0.1:0"
	if mutate != nil {
		mutate(&cfg)
	}
	r := &agentRun{done: make(chan error, 1), reg: prometheus.NewRegistry(), logPath: filepath.Join(t.TempDir(), "agent.log")}
	f, err := os.Create(r.logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel = cancel
	addrs := make(chan [2]string, 1)
	go func() {
		defer f.Close()
		r.done <- agent.RunWithOptions(ctx, cfg, agent.Options{RESTConfig: e.cp.RESTConfig(), Registry: r.reg,
			Logger: slog.New(slog.NewJSONHandler(f, nil)), OnListen: func(m, h string) { addrs <- [2]string{m, h} }})
	}()
	select {
	case a := <-addrs:
		r.metrics, r.health = a[0], a[1]
	case err := <-r.done:
		t.Fatalf("agent exited at start: %v", err)
	}
	t.Cleanup(func() {
		r.stop(t)
		if t.Failed() {
			b, _ := os.ReadFile(r.logPath)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Logf("agent log tail:\n%s", strings.Join(lines[max(0, len(lines)-40):], "\n"))
		}
	})
	ctxw, cancelw := context.WithTimeout(context.Background(), time.Minute)
	defer cancelw()
	poll(ctxw, t, "agent /readyz", func() (bool, string) {
		code, body := httpGet("http://" + r.health + "/readyz")
		return code == 200, body
	})
	return r
}

func (r *agentRun) stop(t *testing.T) {
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

// logLines returns the agent's log lines containing s.
func (r *agentRun) logLines(s string) []string {
	b, _ := os.ReadFile(r.logPath)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

func httpGet(url string) (int, string) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metricLines returns the /metrics lines starting with name.
func (r *agentRun) metricLines(name string) string {
	_, body := httpGet("http://" + r.metrics + "/metrics")
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, name) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// kernelMark is the timestamp of the kernel log's last line: kernelOOMKillsSince counts what came after
// it (test/oomkill).
func kernelMark(t *testing.T) float64 {
	t.Helper()
	mark, err := oomkill.Mark()
	if err != nil {
		t.Fatal(err)
	}
	return mark
}

// kernelOOMKillsSince counts the kernel's OOM kills stamped after mark whose task was in the node's pods
// cgroup (the oom-kill line's task_memcg), so an OOM kill elsewhere on the host is not counted; a kill
// whose summary line the kernel rate-limited cannot be placed and is counted too. Each is logged.
func kernelOOMKillsSince(t *testing.T, e *env, mark float64) int {
	t.Helper()
	in, unattributed, err := oomkill.Since(mark, e.node.PodsCgroup())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range append(in, unattributed...) {
		t.Logf("kernel OOM kill: %s", k)
	}
	return len(in) + len(unattributed)
}

// evictionRequests returns the eviction requests for pods of ns, one per request, from the API server's
// audit log: Events merge a repeated eviction into one Event with a count, the audit log does not.
func evictionRequests(t *testing.T, e *env, ns string) []evictaudit.Request {
	t.Helper()
	reqs, err := evictaudit.Read(e.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	return evictaudit.In(reqs, ns)
}

// checkOneEvictionRequest fails the test unless the audit log has exactly one successful eviction
// request for the pods of ns, for pod, and no request after it (a duplicate); the in-process and chart
// agents are the only senders here. Requests that failed before the success (an API server that was
// down answers 5xx, or nothing) are retries, allowed and logged.
func checkOneEvictionRequest(t *testing.T, e *env, ns, pod string) {
	t.Helper()
	reqs := evictionRequests(t, e, ns)
	if i := oneSuccess(reqs, pod); i < 0 {
		t.Errorf("eviction requests in %s %v (the audit log), want one success: %s (201), after retries that failed only", ns, reqs, pod)
	} else if i > 0 {
		t.Logf("eviction requests in %s %v: %d failed before the one that succeeded", ns, reqs, i)
	}
}

// oneSuccess returns the index of the one request of reqs answered 201 when it is the last request, every
// request is for pod and every earlier one failed (not 2xx); else -1.
func oneSuccess(reqs []evictaudit.Request, pod string) int {
	if len(reqs) == 0 || reqs[len(reqs)-1].Code != 201 {
		return -1
	}
	for _, r := range reqs {
		if r.Pod != pod {
			return -1
		}
	}
	for _, r := range reqs[:len(reqs)-1] {
		if r.Code >= 200 && r.Code < 300 {
			return -1
		}
	}
	return len(reqs) - 1
}

// stressPod is a pod running the stress image with args; mem, when set, is the memory request (and the
// limit too when guaranteed).
func stressPod(ns, name string, args []string, mem string, guaranteed bool) *corev1.Pod {
	c := corev1.Container{Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever, Args: args}
	if mem != "" {
		req := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem)}
		c.Resources.Requests = req
		if guaranteed {
			rl := corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(mem), corev1.ResourceCPU: resource.MustParse("50m")}
			c.Resources = corev1.ResourceRequirements{Requests: rl, Limits: rl}
		}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{c},
			TerminationGracePeriodSeconds: ptr.To[int64](2)},
	}
}

func createPod(ctx context.Context, t *testing.T, e *env, p *corev1.Pod) {
	t.Helper()
	if _, err := e.client.CoreV1().Pods(p.Namespace).Create(ctx, p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func waitRunning(ctx context.Context, t *testing.T, e *env, ns string, names ...string) {
	t.Helper()
	for _, n := range names {
		poll(ctx, t, "pod "+ns+"/"+n+" Running", func() (bool, string) {
			p, err := e.client.CoreV1().Pods(ns).Get(ctx, n, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return p.Status.Phase == corev1.PodRunning, string(p.Status.Phase)
		})
	}
}

// eventsIn lists the events of namespace ns with reason (any reason when "").
func eventsIn(ctx context.Context, t *testing.T, e *env, ns, reason string) []corev1.Event {
	t.Helper()
	opts := metav1.ListOptions{}
	if reason != "" {
		opts.FieldSelector = fields.OneTermEqualSelector("reason", reason).String()
	}
	list, err := e.client.CoreV1().Events(ns).List(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

// oomWatch records every container of namespace ns seen terminated with reason OOMKilled.
type oomWatch struct {
	mu  sync.Mutex
	oom []string
}

func watchOOM(ctx context.Context, t *testing.T, e *env, ns string) *oomWatch {
	w := &oomWatch{}
	go func() {
		for ctx.Err() == nil {
			list, err := e.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
			if err == nil {
				for _, p := range list.Items {
					for _, cs := range p.Status.ContainerStatuses {
						for _, st := range []corev1.ContainerState{cs.State, cs.LastTerminationState} {
							if st.Terminated != nil && st.Terminated.Reason == "OOMKilled" {
								w.add(p.Name + "/" + cs.Name)
							}
						}
					}
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
	}()
	return w
}

func (w *oomWatch) add(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, x := range w.oom {
		if x == s {
			return
		}
	}
	w.oom = append(w.oom, s)
}

func (w *oomWatch) list() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.oom...)
}

// resetNode waits until the pods of earlier tests have left the node (their memory is still charged to
// the pods cgroup while they terminate; a chart-installed agent stays) and removes what earlier agents
// left on it: the taint and the ledger annotation, so each test starts from an idle node without agent
// history.
func resetNode(t *testing.T, e *env) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	poll(ctx, t, "pods of earlier tests gone from the node", func() (bool, string) {
		list, err := e.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("spec.nodeName", e.node.Name()).String()})
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, p := range list.Items {
			if p.Namespace != chartNamespace { // the chart-installed agent stays
				left = append(left, p.Namespace+"/"+p.Name)
			}
		}
		return len(left) == 0, strings.Join(left, ", ")
	})
	tn := &loopbreaker.Tainter{Client: e.client, Node: e.node.Name()}
	if _, err := tn.Remove(ctx); err != nil {
		t.Fatalf("remove leftover taint: %v", err)
	}
	patch := []byte(`{"metadata":{"annotations":{"` + loopbreaker.LedgerAnnotation + `":null}}}`)
	if _, err := e.client.CoreV1().Nodes().Patch(ctx, e.node.Name(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("remove leftover ledger: %v", err)
	}
}
