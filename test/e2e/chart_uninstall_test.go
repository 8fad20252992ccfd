package e2e

// helm uninstall leaves no taint: an agent that holds its NoSchedule taint when the release is
// uninstalled must not leave the node unschedulable. The agent's own release at SIGTERM cannot do it
// alone (helm deletes its ServiceAccount and RBAC in the same call that deletes the DaemonSet), so the
// chart's pre-delete hook stops the agents first and then removes what is left.

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kube-pressure/pressure/test/chartinstall"
)

func TestChartUninstallLeavesNoTaintOnTheNode(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	// Chart defaults but one named setting: a headroom of 99% of the memory capacity puts our
	// memory.available threshold above what is available, so the agent is under pressure at once and
	// for as long as it runs, and holds its taint (nothing on the node is evictable: the agent is
	// system-node-critical).
	f := chartinstall.ForTest{Name: chartRelease, Namespace: chartNamespace, Tag: chartTag, Node: e.node,
		ControlPlane: e.cp, Client: e.client, Defaults: true}
	a, rel := f.InstallRelease(t, `agent.config.headroom.memory\.available=99%`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	poll(ctx, t, "the agent's taint on the node", func() (bool, string) { return nodeTaint(ctx, t, e) != nil, "" })
	// The agent's log to its end (its pod is deleted by the uninstall): what it said on the way out.
	logDone := make(chan string, 1)
	go func() { logDone <- followLog(ctx, e, a.Pod) }()
	agentLog := sync.OnceValues(func() (string, bool) {
		select {
		case l := <-logDone:
			return l, true
		case <-time.After(30 * time.Second):
			return "", false
		}
	})
	defer func() {
		if l, ok := agentLog(); ok && t.Failed() {
			t.Logf("the agent's log, to its end:\n%s", lastLines(l, 30))
		}
	}()
	start := time.Now()
	if err := rel.Uninstall(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("helm uninstall took %s", time.Since(start).Round(time.Millisecond))
	// helm uninstall --wait has returned: the hook ran before anything was deleted, so the taint must
	// be gone now, not eventually.
	if tn := nodeTaint(ctx, t, e); tn != nil {
		t.Errorf("the node still has the agent's taint %s=%s:%s after helm uninstall", tn.Key, tn.Value, tn.Effect)
	}
	if err := chartinstall.WaitNoAgent(ctx, e.client, chartNamespace, e.node.Name()); err != nil {
		t.Fatal(err)
	}
	// The hook's pod lands on the node under pressure, where nothing else is evictable: the agent must
	// not evict it. Before the hook's pod was system-node-critical, CI saw the agent evict it; the loop
	// breaker then kept the Job's next pod off the only node and helm uninstall failed.
	l, ok := agentLog()
	if !ok {
		t.Errorf("the agent's log did not end within 30s of its pod's deletion")
	}
	for _, line := range strings.Split(l, "\n") {
		if strings.Contains(line, `"msg":"evict"`) && strings.Contains(line, chartRelease+"-agent-cleanup") {
			t.Errorf("the agent evicted the uninstall hook's pod: %s", line)
		}
	}
	// Nothing of the hook stays behind: its Job, ServiceAccount and RBAC are deleted once it succeeded.
	jobs, err := e.client.BatchV1().Jobs(chartNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs.Items) != 0 {
		t.Errorf("jobs left in %s after uninstall: %v", chartNamespace, jobNames(jobs.Items))
	}
	crs, err := e.client.RbacV1().ClusterRoles().List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/instance=" + chartRelease})
	if err != nil {
		t.Fatal(err)
	}
	if len(crs.Items) != 0 {
		t.Errorf("%d ClusterRoles of the release left after uninstall, first %s", len(crs.Items), crs.Items[0].Name)
	}
	if tn := nodeTaint(ctx, t, e); tn != nil {
		t.Errorf("the node has the agent's taint again after the agent is gone: %s=%s:%s", tn.Key, tn.Value, tn.Effect)
	}
}

// followLog returns the pod's log from the start until its container stops (or ctx ends).
func followLog(ctx context.Context, e *env, pod *corev1.Pod) string {
	rc, err := e.client.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Follow: true}).Stream(ctx)
	if err != nil {
		return "log: " + err.Error()
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return string(b) + "\nlog: " + err.Error()
	}
	return string(b)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func jobNames(jobs []batchv1.Job) []string {
	out := make([]string, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, j.Name)
	}
	return out
}
