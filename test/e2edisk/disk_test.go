package e2edisk

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/test/evictaudit"
	"github.com/kube-pressure/pressure/test/images"
)

// writerPod writes size bytes into its emptyDir "data" at rate per second (the stress image), then holds.
func writerPod(ns, name, rate, size string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](2),
			Containers: []corev1.Container{{Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever,
				Args:         []string{"disk", "--path", "/data/fill", "--rate", rate, "--target", size, "--hold=true"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}},
	}
}

// startAgent runs the agent in the test process on the package node, syncing every second.
func startAgent(t *testing.T, e *env) string { return startAgentWith(t, e, nil) }

// startAgentWith is startAgent with mutate's changes to the configuration.
func startAgentWith(t *testing.T, e *env, mutate func(*agent.Config)) string {
	t.Helper()
	cfg := agent.DefaultConfig(e.node.Name())
	cfg.NodefsPath, cfg.ImagefsPath, cfg.PodLogsDir = e.node.KubeletRootDir(), e.node.ContainerdRoot(), e.node.PodLogsDir()
	cfg.MetricsAddr, cfg.HealthAddr = "0", "0"
	cfg.Settings.SyncPeriod = time.Second
	if mutate != nil {
		mutate(&cfg)
	}
	logPath := filepath.Join(t.TempDir(), "agent.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		defer f.Close()
		done <- agent.RunWithOptions(ctx, cfg, agent.Options{RESTConfig: e.cp.RESTConfig(), Logger: slog.New(slog.NewJSONHandler(f, nil))})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("agent returned %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("agent did not stop within 30s")
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			t.Logf("agent log tail:\n%s", strings.Join(lines[max(0, len(lines)-30):], "\n"))
		}
	})
	return logPath
}

// nodefs returns the available and total bytes of the kubelet root dir's filesystem.
func nodefs(t *testing.T, e *env) (avail, capacity int64) {
	var fs unix.Statfs_t
	if err := unix.Statfs(e.node.KubeletRootDir(), &fs); err != nil {
		t.Fatal(err)
	}
	return int64(fs.Bavail) * fs.Frsize, int64(fs.Blocks) * fs.Frsize
}

func namespace(ctx context.Context, t *testing.T, e *env, name string) string {
	t.Helper()
	if _, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}},
		metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNamespace(t, e, name) })
	return name
}

// deleteNamespace deletes the namespace and waits (up to 2 minutes) until it is gone, so that its pods'
// volumes and logs are off nodefs before the next test measures it.
func deleteNamespace(t *testing.T, e *env, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_ = e.client.CoreV1().Namespaces().Delete(ctx, name, metav1.DeleteOptions{})
	for {
		_, err := e.client.CoreV1().Namespaces().Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if ctx.Err() != nil {
			t.Logf("namespace %s still there after 2m (the next test may see its pods' disk usage): %v", name, err)
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// podState is "running", "terminating", "gone", or the phase and reason of a pod that ended.
func podState(ctx context.Context, e *env, ns, name string) string {
	p, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "gone"
	case err != nil:
		return "error: " + err.Error()
	case p.DeletionTimestamp != nil:
		return "terminating"
	case p.Status.Phase == corev1.PodRunning:
		return "running"
	}
	return string(p.Status.Phase) + "/" + p.Status.Reason
}

// A pod writing into its emptyDir takes nodefs below the agent's threshold (the kubelet's 10% + the 5%
// headroom: this nodefs holds no images, the imagefs is containerd's root): the agent evicts that pod,
// and only it; the neighbours, with smaller emptyDirs, stay, and the kubelet (at 10%) evicts nothing.
func TestWriterCrossingNodefsIsTheOnlyPodEvicted(t *testing.T) {
	e := requireNode(t)
	writerCrossing(t, e, "disk-writer", func() { startAgent(t, e) })
}

// writerCrossing runs the writer case in namespace ns with the agent that start starts: one eviction
// request, for the writer, and no eviction by the kubelet.
func writerCrossing(t *testing.T, e *env, ns string, start func()) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns = namespace(ctx, t, e, ns)
	for _, n := range []string{"small-a", "small-b"} {
		if _, err := e.client.CoreV1().Pods(ns).Create(ctx, writerPod(ns, n, "0", "16Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitState(ctx, t, e, ns, "running", "small-a", "small-b")
	start()
	avail0, capacity := nodefs(t, e)
	agentAt, kubeletAt := capacity*15/100, capacity*10/100
	t.Logf("nodefs: %d of %d bytes available; agent threshold about %d, kubelet's %d", avail0, capacity, agentAt, kubeletAt)
	if _, err := e.client.CoreV1().Pods(ns).Create(ctx, writerPod(ns, "writer", "5Mi", "1Gi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var crossed, evicted time.Time
	lowest := avail0
	for evicted.IsZero() {
		if ctx.Err() != nil {
			t.Fatalf("writer not evicted; lowest available %d, state %s", lowest, podState(ctx, e, ns, "writer"))
		}
		a, _ := nodefs(t, e)
		lowest = min(lowest, a)
		if crossed.IsZero() && a < agentAt {
			crossed = time.Now()
		}
		if s := podState(ctx, e, ns, "writer"); s == "terminating" || s == "gone" || strings.HasPrefix(s, "Failed") {
			evicted = time.Now()
			t.Logf("writer %s", s)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("crossed the agent's threshold at %s, writer evicted %s later; lowest available %d bytes (kubelet's threshold %d)",
		crossed.Format(time.RFC3339Nano), evicted.Sub(crossed).Round(100*time.Millisecond), lowest, kubeletAt)
	time.Sleep(15 * time.Second) // the kubelet's eviction manager syncs every 10 s: give it a chance to act wrongly
	for _, n := range []string{"small-a", "small-b"} {
		if s := podState(ctx, e, ns, n); s != "running" {
			t.Errorf("neighbour %s is %s, want running", n, s)
		}
	}
	agentEvictions, kubeletEvictions := evictions(ctx, t, e, ns)
	if !onlyRequest(agentEvictions, "writer") || len(kubeletEvictions) != 0 {
		t.Errorf("agent eviction requests %v (want one: writer (201)), kubelet evictions %v (want none)", agentEvictions,
			kubeletEvictions)
	}
	if a, _ := nodefs(t, e); a < agentAt {
		t.Errorf("nodefs still at %d bytes available after the eviction, below the agent's threshold", a)
	}
}

func waitState(ctx context.Context, t *testing.T, e *env, ns, want string, names ...string) {
	t.Helper()
	for _, n := range names {
		for s := podState(ctx, e, ns, n); s != want; s = podState(ctx, e, ns, n) {
			if ctx.Err() != nil {
				t.Fatalf("pod %s/%s is %s, want %s", ns, n, s, want)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
}

// evictions lists the eviction requests for pods of ns, one entry per request as the API server's audit
// log has them ("pod (code)"), so a repeated request shows twice (Events would merge the repeat into one
// Event with a count), and the kubelet's evictions (Evicted events, with their message: the kubelet
// evicts without the Eviction API, and a pod it evicted ends, so it cannot be evicted twice). Only the
// agent sends eviction requests on this node.
func evictions(ctx context.Context, t *testing.T, e *env, ns string) (byAgent, byKubelet []string) {
	t.Helper()
	reqs, err := evictaudit.Read(e.auditLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range evictaudit.In(reqs, ns) {
		byAgent = append(byAgent, r.String())
	}
	evs, err := e.client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs.Items {
		if ev.Reason == "Evicted" {
			byKubelet = append(byKubelet, ev.InvolvedObject.Name+": "+ev.Message)
		}
	}
	sort.Strings(byKubelet)
	return byAgent, byKubelet
}

// onlyRequest reports whether reqs (of evictions) is exactly one eviction request, for pod, answered 201.
func onlyRequest(reqs []string, pod string) bool {
	return len(reqs) == 1 && reqs[0] == pod+" (201)"
}

// The same writer and neighbours without the agent: the kubelet alone, at its own nodefs.available<10%.
// It must evict (a Failed/Evicted pod) within 2 minutes of the crossing; the test logs which pods and
// how long after the crossing, for docs/benchmarks.md.
func TestKubeletAloneEvictsAtItsOwnThreshold(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := namespace(ctx, t, e, "disk-kubelet")
	for _, n := range []string{"small-a", "small-b"} {
		if _, err := e.client.CoreV1().Pods(ns).Create(ctx, writerPod(ns, n, "0", "16Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitState(ctx, t, e, ns, "running", "small-a", "small-b")
	avail0, capacity := nodefs(t, e)
	kubeletAt := capacity * 10 / 100
	t.Logf("nodefs: %d of %d bytes available; kubelet's threshold %d", avail0, capacity, kubeletAt)
	if _, err := e.client.CoreV1().Pods(ns).Create(ctx, writerPod(ns, "writer", "5Mi", "1Gi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var crossed, first time.Time
	lowest := avail0
	deadline := time.Now().Add(4 * time.Minute)
	evicted := map[string]time.Duration{}
	for time.Now().Before(deadline) && (first.IsZero() || time.Since(first) < 30*time.Second) {
		a, _ := nodefs(t, e)
		lowest = min(lowest, a)
		if crossed.IsZero() && a < kubeletAt {
			crossed = time.Now()
		}
		for _, n := range []string{"writer", "small-a", "small-b"} {
			if _, seen := evicted[n]; !seen && strings.HasPrefix(podState(ctx, e, ns, n), "Failed/Evicted") && !crossed.IsZero() {
				evicted[n] = time.Since(crossed).Round(100 * time.Millisecond)
				if first.IsZero() {
					first = time.Now()
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	_, byKubelet := evictions(ctx, t, e, ns)
	t.Logf("crossed the kubelet's threshold at %s; evicted after the crossing: %v; lowest available %d bytes; Evicted events: %v",
		crossed.Format(time.RFC3339Nano), evicted, lowest, byKubelet)
	if len(evicted) == 0 {
		t.Errorf("the kubelet evicted nothing within 4 minutes (lowest available %d, threshold %d)", lowest, kubeletAt)
	}
}
