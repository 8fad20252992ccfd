package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/images"
)

func TestDeploymentPodsRunAsRealContainersOnTheNode(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "deploy")
	sel := map[string]string{"app": "pause"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "pause", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: sel},
				Spec: corev1.PodSpec{
					Tolerations: tolerateAll(),
					Containers: []corev1.Container{{
						Name: "pause", Image: images.PauseName, ImagePullPolicy: corev1.PullNever,
					}},
					TerminationGracePeriodSeconds: ptr.To[int64](2),
				},
			},
		},
	}
	if _, err := e.client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	poll(ctx, t, "2 running pause pods", func() (bool, string) {
		list, err := e.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
		if err != nil {
			return false, err.Error()
		}
		pods = pods[:0]
		var states []string
		for _, p := range list.Items {
			states = append(states, p.Name+"="+string(p.Status.Phase))
			if p.Status.Phase == corev1.PodRunning {
				pods = append(pods, p)
			}
		}
		return len(pods) == 2, strings.Join(states, ",")
	})
	_, subnet, _ := net.ParseCIDR("10.213.77.0/24")
	for _, p := range pods {
		if p.Spec.NodeName != e.node.Name() {
			t.Errorf("pod %s on node %q, want %q", p.Name, p.Spec.NodeName, e.node.Name())
		}
		if ip := net.ParseIP(p.Status.PodIP); ip == nil || !subnet.Contains(ip) {
			t.Errorf("pod %s IP %q, want one in %s (bridge CNI)", p.Name, p.Status.PodIP, subnet)
		}
		cs := p.Status.ContainerStatuses
		if len(cs) != 1 || cs[0].State.Running == nil || !strings.HasPrefix(cs[0].ContainerID, "containerd://") {
			t.Errorf("pod %s container status %+v, want one running containerd container", p.Name, cs)
			continue
		}
		// A real container: its process lives in the pod's cgroup under the pods cgroup.
		procs := cgroupProcsUnder(filepath.Join(e.node.PodsMemoryCgroupDir(), "besteffort", "pod"+string(p.UID)))
		if len(procs) == 0 {
			t.Errorf("pod %s: no process in memory cgroup %s", p.Name, filepath.Join(e.node.PodsMemoryCgroupDir(), "besteffort", "pod"+string(p.UID)))
		}
	}
	if err := e.client.AppsV1().Deployments(ns).Delete(ctx, "pause", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestNodeProxyServesKubeletConfigzAndStatsSummary(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raw, err := e.client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", e.node.Name(), "proxy", "configz").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET node proxy configz: %v: %s", err, raw)
	}
	var configz struct {
		KubeletConfig struct {
			KubeReserved            map[string]string `json:"kubeReserved"`
			EvictionHard            map[string]string `json:"evictionHard"`
			KernelMemcgNotification bool              `json:"kernelMemcgNotification"`
			CgroupDriver            string            `json:"cgroupDriver"`
		} `json:"kubeletconfig"`
	}
	if err := json.Unmarshal(raw, &configz); err != nil {
		t.Fatalf("decode configz: %v: %s", err, raw)
	}
	kc := configz.KubeletConfig
	if kc.EvictionHard["allocatableMemory.available"] != evictionThreshold || !kc.KernelMemcgNotification || kc.CgroupDriver != "cgroupfs" || kc.KubeReserved["memory"] == "" {
		t.Errorf("configz kubeletconfig %+v: want the test's evictionHard, kernelMemcgNotification, cgroupfs, kubeReserved memory", kc)
	}
	raw, err = e.client.CoreV1().RESTClient().Get().AbsPath("/api/v1/nodes", e.node.Name(), "proxy", "stats", "summary").DoRaw(ctx)
	if err != nil {
		t.Fatalf("GET node proxy stats/summary: %v: %s", err, raw)
	}
	var summary struct {
		Node struct {
			NodeName string `json:"nodeName"`
			Memory   struct {
				AvailableBytes *uint64 `json:"availableBytes"`
			} `json:"memory"`
		} `json:"node"`
	}
	if err := json.Unmarshal(raw, &summary); err != nil {
		t.Fatalf("decode summary: %v", err)
	}
	if summary.Node.NodeName != e.node.Name() || summary.Node.Memory.AvailableBytes == nil {
		t.Errorf("summary node %+v: want node %s with memory.availableBytes", summary.Node, e.node.Name())
	}
	limit, err := os.ReadFile(filepath.Join(e.node.PodsMemoryCgroupDir(), "memory.limit_in_bytes"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(limit)), strconv.FormatInt(e.podsLimit.Value(), 10); got != want {
		t.Errorf("pods cgroup memory.limit_in_bytes: got %s, want %s (MemTotal - kubeReserved)", got, want)
	}
}

func TestKubeletEvictsMemoryHogWhenPodsCgroupNearsItsLimit(t *testing.T) {
	e := requireNode(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "evict")
	pressure := watchMemoryPressure(ctx, t, e)
	evictHogByKubelet(ctx, t, e, ns, "hog")
	// The condition is set at the eviction and kept for evictionPressureTransitionPeriod.
	poll(ctx, t, "node condition MemoryPressure=True seen", func() (bool, string) { return pressure.seen(), "" })
	t.Logf("node condition MemoryPressure: %s", pressure.message())
}

// evictHogByKubelet runs a pod that allocates memory until the real kubelet evicts it, and
// returns the pod as the kubelet left it (Failed, Evicted). The test fails otherwise.
func evictHogByKubelet(ctx context.Context, t *testing.T, e *env, ns, name string) *corev1.Pod {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: hogSpec()}
	if _, err := e.client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return waitEvictedByKubelet(ctx, t, e, ns, name)
}

// hogSpec is a pod that allocates memory (64Mi/s up to 3Gi) until something stops it.
func hogSpec() corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		// Other tests in this package may leave a NoSchedule taint (e.g. the agent's); this
		// test is about the kubelet only.
		Tolerations: tolerateAll(),
		Containers: []corev1.Container{{
			Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever,
			Args: []string{"mem", "--rate", "64Mi", "--target", "3Gi"},
		}},
		TerminationGracePeriodSeconds: ptr.To[int64](2),
	}
}

// waitEvictedByKubelet waits until pod name ends and fails the test unless the kubelet evicted it.
func waitEvictedByKubelet(ctx context.Context, t *testing.T, e *env, ns, name string) *corev1.Pod {
	t.Helper()
	start := time.Now()
	var got *corev1.Pod
	poll(ctx, t, "pod "+name+" Failed", func() (bool, string) {
		p, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		got = p
		return p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded,
			string(p.Status.Phase) + " " + p.Status.Reason
	})
	t.Logf("pod %s ended %s after %s: phase %s, reason %q, message %q", name, time.Now().UTC().Format(time.RFC3339),
		time.Since(start).Round(time.Second), got.Status.Phase, got.Status.Reason, got.Status.Message)
	if got.Status.Phase != corev1.PodFailed || got.Status.Reason != "Evicted" {
		t.Fatalf("pod %s: got phase %s reason %q, want Failed Evicted", name, got.Status.Phase, got.Status.Reason)
	}
	if !strings.Contains(got.Status.Message, "memory") {
		t.Errorf("pod %s eviction message %q does not name memory", name, got.Status.Message)
	}
	return got
}

// tolerateAll tolerates every taint, so taints other tests leave on the shared node do not
// keep these pods Pending.
func tolerateAll() []corev1.Toleration {
	return []corev1.Toleration{{Operator: corev1.TolerationOpExists}}
}

// pressureWatch polls the node's MemoryPressure condition in the background.
type pressureWatch struct {
	mu  sync.Mutex
	msg string
	on  bool
}

func (w *pressureWatch) seen() bool { w.mu.Lock(); defer w.mu.Unlock(); return w.on }

func (w *pressureWatch) message() string { w.mu.Lock(); defer w.mu.Unlock(); return w.msg }

func watchMemoryPressure(ctx context.Context, t *testing.T, e *env) *pressureWatch {
	w := &pressureWatch{}
	go func() {
		for ctx.Err() == nil {
			node, err := e.client.CoreV1().Nodes().Get(ctx, e.node.Name(), metav1.GetOptions{})
			if err == nil {
				for _, c := range node.Status.Conditions {
					if c.Type == corev1.NodeMemoryPressure && c.Status == corev1.ConditionTrue {
						w.mu.Lock()
						if !w.on {
							w.on = true
							w.msg = c.Reason + ": " + c.Message + " (transition " + c.LastTransitionTime.UTC().Format(time.RFC3339) + ")"
						}
						w.mu.Unlock()
					}
				}
			}
			time.Sleep(500 * time.Millisecond)
		}
	}()
	return w
}

func createNamespace(ctx context.Context, t *testing.T, e *env, prefix string) string {
	t.Helper()
	ns, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Pods need the namespace's default ServiceAccount (made by the controller manager).
	poll(ctx, t, "serviceaccount default in "+ns.Name, func() (bool, string) {
		_, err := e.client.CoreV1().ServiceAccounts(ns.Name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, ""
	})
	t.Cleanup(func() {
		_ = e.client.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	})
	return ns.Name
}

// poll calls cond every 500ms until it returns true, failing the test with the last status
// when ctx ends.
func poll(ctx context.Context, t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	last := ""
	for {
		ok, status := cond()
		if ok {
			return
		}
		last = status
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v; last status: %s%s", what, ctx.Err(), last, recentWarnings())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// cgroupProcsUnder lists the PIDs in dir and its descendants.
func cgroupProcsUnder(dir string) []string {
	var pids []string
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		data, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		pids = append(pids, strings.Fields(string(data))...)
		return nil
	})
	return pids
}

// recentWarnings lists the cluster's five newest Warning events but MissingClusterDNS (FailedCreatePodSandBox and the
// like), so that a timed-out wait says why the kubelet did not get there.
func recentWarnings() string {
	if shared.client == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	list, err := shared.client.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "type=Warning"})
	if err != nil {
		return fmt.Sprintf("; warning events: %v", err)
	}
	var evs []corev1.Event
	for _, ev := range list.Items {
		if ev.Reason != "MissingClusterDNS" { // every pod has one: the test node runs no DNS
			evs = append(evs, ev)
		}
	}
	sort.SliceStable(evs, func(i, j int) bool {
		ti, tj := eventTime(evs[i]), eventTime(evs[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		return evs[i].Name < evs[j].Name
	})
	if len(evs) > 5 {
		evs = evs[len(evs)-5:]
	}
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintf(&b, "\n\twarning %s %s/%s %s x%d: %s", eventTime(ev).UTC().Format(time.RFC3339),
			ev.InvolvedObject.Namespace, ev.InvolvedObject.Name, ev.Reason, ev.Count, ev.Message)
	}
	return b.String()
}

func eventTime(ev corev1.Event) time.Time {
	if !ev.LastTimestamp.IsZero() {
		return ev.LastTimestamp.Time
	}
	if !ev.EventTime.IsZero() {
		return ev.EventTime.Time
	}
	return ev.CreationTimestamp.Time
}
