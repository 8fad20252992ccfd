package chartinstall

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
)

// agentSelector selects the chart's agent pods.
const agentSelector = "app.kubernetes.io/component=agent"

// Agent is the chart's agent pod on one node.
type Agent struct {
	Client kubernetes.Interface
	Pod    *corev1.Pod
}

// WaitAgent waits until the agent pod of namespace ns on node is Ready and returns it.
func WaitAgent(ctx context.Context, c kubernetes.Interface, ns, node string) (*Agent, error) {
	var last string
	for {
		pods, err := agentPods(ctx, c, ns, node)
		last = fmt.Sprint(err)
		if err == nil {
			last = fmt.Sprintf("%d agent pods", len(pods))
			for i := range pods {
				if pods[i].DeletionTimestamp == nil && ready(&pods[i]) {
					return &Agent{Client: c, Pod: &pods[i]}, nil
				}
				last = fmt.Sprintf("agent pod %s: phase %s, not Ready", pods[i].Name, pods[i].Status.Phase)
			}
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return nil, fmt.Errorf("wait for a Ready agent pod on %s (last: %s): %w", node, last, err)
		}
	}
}

// WaitNoAgent waits until no agent pod of namespace ns is bound to node.
func WaitNoAgent(ctx context.Context, c kubernetes.Interface, ns, node string) error {
	for {
		pods, err := agentPods(ctx, c, ns, node)
		if err == nil && len(pods) == 0 {
			return nil
		}
		if err := sleep(ctx, 250*time.Millisecond); err != nil {
			return fmt.Errorf("wait for the agent pod to leave %s: %w", node, err)
		}
	}
}

func agentPods(ctx context.Context, c kubernetes.Interface, ns, node string) ([]corev1.Pod, error) {
	list, err := c.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: agentSelector,
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String()})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// Log returns the agent container's log (its JSON lines) through the API server.
func (a *Agent) Log(ctx context.Context) (string, error) {
	b, err := a.Client.CoreV1().Pods(a.Pod.Namespace).GetLogs(a.Pod.Name, &corev1.PodLogOptions{}).DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("log of %s: %w", a.Pod.Name, err)
	}
	return string(b), nil
}

// LogLines returns the log lines containing s ("" if the log cannot be read).
func (a *Agent) LogLines(ctx context.Context, s string) []string {
	text, _ := a.Log(ctx)
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// Metrics returns the agent's /metrics text through the API server's pod proxy.
func (a *Agent) Metrics(ctx context.Context) (string, error) {
	b, err := a.Get(ctx, "/metrics", nil)
	return string(b), err
}

// Get returns the body of path (with query params) on the agent's metrics port, through the API
// server's pod proxy: /metrics, or /debug/pprof/... when the agent runs with --profiling.
func (a *Agent) Get(ctx context.Context, path string, params map[string]string) ([]byte, error) {
	port := "8080"
	for _, c := range a.Pod.Spec.Containers {
		for _, p := range c.Ports {
			if p.Name == "metrics" {
				port = strconv.Itoa(int(p.ContainerPort))
			}
		}
	}
	b, err := a.Client.CoreV1().Pods(a.Pod.Namespace).ProxyGet("http", a.Pod.Name, port, path, params).DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s of %s: %w", path, a.Pod.Name, err)
	}
	return b, nil
}

// MetricValue returns the value of the first sample of metric name in a /metrics text (Prometheus
// text format), whatever its labels: "name 1" and `name{node="a"} 1` both give 1.
func MetricValue(text, name string) (float64, bool) {
	for _, l := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(l, name)
		if !ok || rest == "" {
			continue
		}
		if rest[0] == '{' {
			end := strings.LastIndexByte(rest, '}')
			if end < 0 {
				continue
			}
			rest = rest[end+1:]
		}
		if rest == "" || rest[0] != ' ' {
			continue // another metric whose name starts with name
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
		return f, err == nil
	}
	return 0, false
}

// ArmedNotifiers returns pressure_agent_notifier_armed of a /metrics text: each notifier the agent
// tried at start (label notifier) and whether it is armed.
func ArmedNotifiers(text string) map[string]bool {
	const name = "pressure_agent_notifier_armed{"
	out := map[string]bool{}
	for _, l := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(l, name)
		if !ok {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		for _, kv := range strings.Split(labels, ",") {
			if n, ok := strings.CutPrefix(kv, `notifier="`); ok {
				out[strings.TrimSuffix(n, `"`)] = strings.TrimSpace(value) == "1"
			}
		}
	}
	return out
}

// PID returns the host PID of the agent's process: the first entry of cgroup.procs of its
// container's cgroup, found below podsCgroupDir (a memory or cpuacct hierarchy's pods cgroup).
func (a *Agent) PID(podsCgroupDir string) (int, error) {
	var id string
	for _, cs := range a.Pod.Status.ContainerStatuses {
		if cs.Name == "agent" {
			_, id, _ = strings.Cut(cs.ContainerID, "://")
		}
	}
	if id == "" {
		return 0, fmt.Errorf("pod %s: no container ID of container agent", a.Pod.Name)
	}
	podDir := "pod" + string(a.Pod.UID)
	var procs string
	err := filepath.WalkDir(podsCgroupDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() != podDir {
			return err
		}
		procs = filepath.Join(path, id, "cgroup.procs")
		return filepath.SkipAll
	})
	if err != nil {
		return 0, fmt.Errorf("find the cgroup of pod %s: %w", a.Pod.Name, err)
	}
	if procs == "" {
		return 0, fmt.Errorf("no cgroup %s below %s", podDir, podsCgroupDir)
	}
	b, err := os.ReadFile(procs)
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	pid, err := strconv.Atoi(first)
	if err != nil {
		return 0, fmt.Errorf("%s: first line %q: %w", procs, first, err)
	}
	return pid, nil
}
