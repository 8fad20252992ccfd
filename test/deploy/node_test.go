package deploy

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/images"
)

// Level 2: the node's pods get podsLimit bytes (kubeReserved = MemTotal - podsLimit); the kubelet
// evicts at allocatableMemory.available < 200Mi, the agent (policy pressure, headroom 256Mi) at
// about 456Mi.
const (
	l2PodsLimit      = 2 << 30
	l2KubeletEvictAt = "200Mi"
	l2Tag            = "e2e"
)

// nodeProblem says why this machine cannot run a level-2 node, or "".
func nodeProblem() string {
	if os.Geteuid() != 0 {
		return "not root (containerd, the kubelet and cgroups need root)"
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err != nil {
		return "no cgroup v1 memory controller: " + err.Error()
	}
	return ""
}

// TestChartOnARealNodeAgentEvictsAMemoryHogBeforeTheKubelet is level 2: the chart installed from
// local images into the real single-node cluster, its agent and janitor pods Ready, then a pod
// ramping memory is evicted by the agent (not the kubelet, not the OOM killer) and any Evicted
// shell is deleted by the janitor.
func TestChartOnARealNodeAgentEvictsAMemoryHogBeforeTheKubelet(t *testing.T) {
	if p := nodeProblem(); p != "" {
		clustertest.SkipOrFail(t, "level-2 node unavailable: %s", p)
	}
	helm(t) // skip (or fail in CI) before building anything when helm is missing
	root := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute) // includes waiting for the machine-wide node lock
	defer cancel()
	testImages, err := images.BuildAll(ctx, filepath.Join(cluster.CacheDir(), "images"))
	if err != nil {
		t.Fatalf("test images: %v", err)
	}
	daemons, err := chartinstall.DaemonImages(ctx, root, t.TempDir(), l2Tag, chartinstall.AgentComponent, chartinstall.JanitorComponent)
	if err != nil {
		t.Fatal(err)
	}
	imgs := append(testImages, daemons...)
	cp := controlPlane(t)
	memTotal, err := memTotal()
	if err != nil {
		t.Fatal(err)
	}
	reserved := resource.NewQuantity(memTotal-l2PodsLimit, resource.BinarySI)
	node, err := cluster.StartNode(ctx, cp, cluster.NodeOptions{Images: imgs, KubeletConfig: &kubeletv1beta1.KubeletConfiguration{
		KubeReserved:            map[string]string{"memory": reserved.String()},
		KernelMemcgNotification: true,
		EvictionHard:            map[string]string{"memory.available": l2KubeletEvictAt, "allocatableMemory.available": l2KubeletEvictAt},
	}})
	if err != nil {
		t.Fatalf("start node: %v", err)
	}
	t.Cleanup(func() {
		if err := node.Stop(); err != nil {
			t.Errorf("stop node: %v", err)
		}
	})
	// Pods reach the API server through the kubernetes Service IP: the harness routes it
	// (cluster.APIRoute), as kube-proxy would.

	start := time.Now()
	rel := chartinstall.Release{Helm: chartinstall.Helm{Bin: helm(t), Home: t.TempDir()}, Chart: chartDir(t),
		Name: releaseName, Namespace: releaseNS, Kubeconfig: cp.Kubeconfig()}
	out, err := rel.Install(ctx, append(chartinstall.NodeValues(node, l2Tag), "janitor.config.ttl=0s", "janitor.config.keepPerOwner=0")...)
	if err != nil {
		dumpPods(t, cp)
		t.Fatalf("helm install: %v", err)
	}
	t.Logf("helm install returned after %s:\n%s", time.Since(start).Round(time.Second), out)
	c := admin(t, cp)
	// helm --wait lets a DaemonSet with maxUnavailable 10% of one node pass with no pod Ready:
	// wait for every agent and janitor pod ourselves.
	waitFor(t, "agent and janitor pods Ready", 3*time.Minute, func() error {
		pods, err := c.CoreV1().Pods(releaseNS).List(ctx, metav1.ListOptions{})
		if err != nil {
			return err
		}
		count := map[string]int{}
		for _, p := range pods.Items {
			if !ready(&p) {
				return fmt.Errorf("pod %s not Ready", p.Name)
			}
			count[p.Labels["app.kubernetes.io/component"]]++
		}
		if count["agent"] != 1 || count["janitor"] != 2 {
			return fmt.Errorf("Ready pods by component %v, want 1 agent and 2 janitors", count)
		}
		return nil
	})
	t.Logf("agent and janitor pods Ready %s after helm install", time.Since(start).Round(time.Second))
	// The chart's defaults on this containerd 1.6 node (no --set of recursiveReadOnly): the agent started,
	// as its non-root user without capabilities, behind read-only host mounts (issue 30, item 2).
	checkAgentIsNonRootBehindReadOnlyMounts(t, c)
	// The agent's first sync publishes its node's (empty) avoidances: the chart's Role and admission
	// policy let the deployed agent, with the token the kubelet mounted, write exactly that ConfigMap.
	waitFor(t, "the agent's avoidance ConfigMap", 60*time.Second, func() error {
		cm, err := c.CoreV1().ConfigMaps(releaseNS).Get(ctx, avoidPrefix+node.Name(), metav1.GetOptions{})
		if err != nil {
			return err
		}
		if cm.Annotations["pressure.kube-pressure.io/node"] != node.Name() || len(cm.OwnerReferences) != 1 {
			return fmt.Errorf("configmap %s: annotations %v, owners %v", cm.Name, cm.Annotations, cm.OwnerReferences)
		}
		return nil
	})

	createNamespace(t, cp, workload)
	// The hog claims to be a static pod: the API server does not validate config.source, and the kubelet
	// overwrites it with "api" in its own copy, so the agent must rank and evict it like any other pod
	// (issue 30, item 1: before, the agent took it for a critical static pod and skipped it).
	hog := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "hog", Namespace: workload,
			Annotations: map[string]string{"kubernetes.io/config.source": "file"}},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: ptr.To[int64](5),
			Containers: []corev1.Container{{
				Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever,
				Args: []string{"mem", "--rate", "64Mi", "--target", "1900Mi"},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
					corev1.ResourceMemory: resource.MustParse("64Mi"), corev1.ResourceCPU: resource.MustParse("10m")}},
			}},
		},
	}
	if _, err := c.CoreV1().Pods(workload).Create(ctx, hog, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, c, "hog", "PressureEviction", 4*time.Minute)
	t.Logf("agent evicted the hog: %s/%s %q (source %s on %s)", ev.Type, ev.Reason, ev.Message, ev.Source.Component, ev.Source.Host)
	if ev.Source.Component != "pressure-agent" {
		t.Errorf("PressureEviction event from %q, want pressure-agent", ev.Source.Component)
	}
	if kubelet := events(t, c, "hog", "Evicted"); len(kubelet) > 0 {
		t.Errorf("the kubelet evicted the hog too (the agent was not first): %q", kubelet[0].Message)
	}
	// The agent evicts through the API: the pod is deleted. A Failed/Evicted shell (a kubelet
	// eviction) is deleted by the janitor (ttl 0s) after it wrote its evidence Event.
	var shell bool
	waitFor(t, "hog pod gone", 3*time.Minute, func() error {
		p, err := c.CoreV1().Pods(workload).Get(ctx, "hog", metav1.GetOptions{})
		if err != nil {
			return nil
		}
		for _, s := range p.Status.ContainerStatuses {
			if s.State.Terminated != nil && s.State.Terminated.Reason == "OOMKilled" {
				t.Errorf("hog was OOM-killed")
			}
		}
		// A pod being deleted passes through Failed (its container exits 3 on SIGTERM); only a
		// kubelet eviction leaves a Failed/Evicted pod without a deletion timestamp.
		shell = shell || (p.Status.Phase == corev1.PodFailed && p.Status.Reason == "Evicted" && p.DeletionTimestamp == nil)
		return fmt.Errorf("pod still there: phase %s reason %q", p.Status.Phase, p.Status.Reason)
	})
	if shell {
		ev := waitEvent(t, c, "hog", "EvictedPodDeleted", time.Minute)
		t.Logf("janitor deleted the Evicted shell: %q", ev.Message)
	} else {
		t.Logf("the hog was deleted through the Eviction API: no Evicted shell for the janitor")
	}

	// The janitor on a shell like the kubelet leaves: a pod marked Failed/Evicted. It is bound to a
	// Node object with no kubelet behind it: on the real node the kubelet races our status update
	// (it starts the pod and writes its own status), which made this check flaky.
	createNode(t, c, "shell-node")
	shellPod := createPod(t, c, workload, "evicted-shell", "shell-node", "")
	shellPod.Status.Phase, shellPod.Status.Reason = corev1.PodFailed, "Evicted"
	shellPod.Status.Message = "The node was low on resource: memory. (test)"
	if _, err := c.CoreV1().Pods(workload).UpdateStatus(ctx, shellPod, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("mark pod Evicted: %v", err)
	}
	ev = waitEvent(t, c, "evicted-shell", "EvictedPodDeleted", 2*time.Minute)
	t.Logf("janitor evidence: %s %q", ev.Source.Component, ev.Message)
	waitFor(t, "evicted shell deleted", time.Minute, func() error {
		_, err := c.CoreV1().Pods(workload).Get(ctx, "evicted-shell", metav1.GetOptions{})
		if err == nil {
			return errors.New("still there")
		}
		return nil
	})

	logFootprint(t, c)
}

// logFootprint logs the resident memory and CPU time of the agent and janitor pods from their own
// /metrics (through the API server's pod proxy): the numbers agent.resources and janitor.resources
// must cover (docs/operations.md "Sizing").
func logFootprint(t *testing.T, c kubernetes.Interface) {
	t.Helper()
	pods, err := c.CoreV1().Pods(releaseNS).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		body, err := c.CoreV1().Pods(releaseNS).ProxyGet("http", p.Name, "8080", "/metrics", nil).DoRaw(context.Background())
		if err != nil {
			t.Errorf("metrics of %s: %v", p.Name, err)
			continue
		}
		var rss, cpu string
		for _, l := range strings.Split(string(body), "\n") {
			if v, ok := strings.CutPrefix(l, "process_resident_memory_bytes "); ok {
				rss = v
			}
			if v, ok := strings.CutPrefix(l, "process_cpu_seconds_total "); ok {
				cpu = v
			}
		}
		var b float64
		fmt.Sscan(rss, &b)
		t.Logf("footprint %s: resident %.1f MiB, cpu %s s since start %s", p.Name, b/(1<<20), cpu, p.Status.StartTime)
	}
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func events(t *testing.T, c kubernetes.Interface, pod, reason string) []corev1.Event {
	t.Helper()
	sel := fields.Set{"involvedObject.name": pod, "reason": reason}.AsSelector().String()
	l, err := c.CoreV1().Events(workload).List(context.Background(), metav1.ListOptions{FieldSelector: sel})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

func waitEvent(t *testing.T, c kubernetes.Interface, pod, reason string, timeout time.Duration) corev1.Event {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		if evs := events(t, c, pod, reason); len(evs) > 0 {
			return evs[0]
		}
		if time.Now().After(deadline) {
			all, _ := c.CoreV1().Events("").List(context.Background(), metav1.ListOptions{})
			var b strings.Builder
			for _, e := range all.Items {
				fmt.Fprintf(&b, "%s %s/%s %s: %s\n", e.Source.Component, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
			}
			t.Fatalf("no %s event for pod %s within %s; events:\n%s", reason, pod, timeout, b.String())
		}
		time.Sleep(time.Second)
	}
}

// dumpPods logs every pod of the release namespace with its status, for a failed install.
func dumpPods(t *testing.T, cp *cluster.ControlPlane) {
	t.Helper()
	out, _ := kubectl(t, cp, "", "get", "pods", "-A", "-o", "wide")
	t.Logf("pods:\n%s", out)
	out, _ = kubectl(t, cp, "", "describe", "pods", "-n", releaseNS)
	t.Logf("describe:\n%s", out)
	for _, c := range []string{"agent", "janitor"} {
		out, _ = kubectl(t, cp, "", "logs", "-n", releaseNS, "-l", "app.kubernetes.io/component="+c, "--tail=30", "--all-containers", "--prefix")
		t.Logf("%s logs:\n%s", c, out)
	}
}

// memTotal reads MemTotal from /proc/meminfo.
func memTotal() (int64, error) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "MemTotal:" {
			var kb int64
			if _, err := fmt.Sscan(f[1], &kb); err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("/proc/meminfo: no MemTotal")
}
