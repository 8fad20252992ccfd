package soak

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/evictaudit"
	"github.com/kube-pressure/pressure/test/images"
)

// The node: pods get podsLimit in all (kubeReserved = MemTotal - podsLimit), the kubelet evicts below
// kubeletThreshold (bench/agent's node: the kubelet's default housekeeping, no memcg notifier).
const (
	podsLimit        = 2 << 30
	kubeletThreshold = "200Mi"
	// releaseNS and release are the chart's release; janitorTTL is the chart's default janitor.ttl and
	// janitorReplicas its default janitor.replicas.
	releaseNS  = "pressure-system"
	release    = "pressure"
	janitorTTL = 10 * time.Minute
	// janitorKeepPerOwner is the chart's default janitor.config.keepPerOwner.
	janitorKeepPerOwner = 1
	// taintHysteresis is the chart's default agent.config loopBreaker.taintHysteresis.
	taintHysteresis = 10 * time.Second
	janitorReplicas = 2
)

// cluster is the soak's control plane, node and chart.
type soakCluster struct {
	cp       *cluster.ControlPlane
	node     *cluster.Node
	client   kubernetes.Interface
	auditLog string
	// values are the chart values set beside its defaults.
	values []string
}

// startCluster starts a control plane (with an audit log of eviction requests and pod deletes in dir), the level-2
// node (taking the machine's node lock) with the stress image, installs the chart with its defaults,
// the janitor included, and dryRun=false, and creates the soak's PriorityClasses.
func startCluster(t *testing.T, dir string) *soakCluster {
	t.Helper()
	audit, auditLog, err := evictaudit.BothArgs(dir)
	if err != nil {
		t.Fatal(err)
	}
	cp := clustertest.ControlPlane(t, clustertest.WithOptions(func(o *cluster.ControlPlaneOptions) { o.ExtraAPIServerArgs = audit }))
	// Each step has its own deadline: the node's start waits for the machine's node lock, which other
	// real-node packages of make test hold for many minutes (the first make test with the short version
	// ran out of a shared 10-minute deadline there).
	buildCtx, cancelBuild := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancelBuild()
	imgs, err := images.BuildAll(buildCtx, filepath.Join(cluster.CacheDir(), "images"))
	if err != nil {
		t.Fatalf("test images: %v", err)
	}
	cfg, err := kubeletConfig()
	if err != nil {
		t.Fatal(err)
	}
	node := clustertest.Node(t, cp, cluster.NodeOptions{KubeletConfig: cfg, Images: imgs})
	client, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	c := &soakCluster{cp: cp, node: node, client: client, auditLog: auditLog}
	f := chartinstall.ForTest{Name: release, Namespace: releaseNS, Tag: "soak", Node: node, ControlPlane: cp, Client: client,
		Janitor: true, Defaults: true}
	c.values = chartinstall.NodeValues(node, "soak")
	f.Install(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, value := range map[string]int32{PriorityLow: 100, PriorityHigh: 1000} {
		pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}
		if _, err := client.SchedulingV1().PriorityClasses().Create(ctx, pc, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create PriorityClass %s: %v", name, err)
		}
	}
	return c
}

// kubeletConfig is bench/agent's node: the pods cgroup limited to podsLimit, the kubelet's hard
// thresholds at kubeletThreshold.
func kubeletConfig() (*kubeletv1beta1.KubeletConfiguration, error) {
	memTotal, err := cluster.HostMemTotal()
	if err != nil {
		return nil, err
	}
	reserved := resource.NewQuantity(memTotal-podsLimit, resource.BinarySI)
	return &kubeletv1beta1.KubeletConfiguration{
		KubeReserved:                     map[string]string{"memory": reserved.String()},
		EnforceNodeAllocatable:           []string{"pods"},
		EvictionHard:                     map[string]string{"memory.available": kubeletThreshold, "allocatableMemory.available": kubeletThreshold},
		EvictionPressureTransitionPeriod: metav1.Duration{Duration: 10 * time.Second},
	}, nil
}

// pod is w as a pod of namespace ns.
func pod(ns string, w Workload) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: w.Name, Namespace: ns}, Spec: podSpec(w, corev1.RestartPolicyNever)}
}

// podSpec runs the stress image with w's arguments, memory request and limit (Guaranteed: CPU too),
// priority and /data emptyDir.
func podSpec(w Workload, restart corev1.RestartPolicy) corev1.PodSpec {
	c := corev1.Container{Name: "stress", Image: images.StressName, ImagePullPolicy: corev1.PullNever, Args: w.Args}
	if w.Request != "" {
		c.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(w.Request)}
	}
	if w.Limit != "" {
		c.Resources.Limits = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(w.Limit)}
	}
	if w.QOS() == "Guaranteed" {
		c.Resources.Requests[corev1.ResourceCPU] = resource.MustParse("50m")
		c.Resources.Limits[corev1.ResourceCPU] = resource.MustParse("50m")
	}
	s := corev1.PodSpec{RestartPolicy: restart, PriorityClassName: w.Priority, TerminationGracePeriodSeconds: ptr.To[int64](2)}
	if w.Data {
		c.VolumeMounts = []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}
		s.Volumes = []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
	}
	s.Containers = []corev1.Container{c}
	return s
}

// probeWait bounds how long probe waits.
const probeWait = time.Minute

// probe creates an unrelated BestEffort pod in ns and returns how long it took to run, or -1 when it
// did not within probeWait.
func (c *soakCluster) probe(ctx context.Context, ns string) (time.Duration, []string) {
	start := time.Now()
	if _, err := c.client.CoreV1().Pods(ns).Create(ctx, pod(ns, Workload{Name: "probe", Args: []string{"sleep"}}), metav1.CreateOptions{}); err != nil {
		return -1, nil
	}
	seen := taintsSeen{}
	for time.Since(start) < probeWait && ctx.Err() == nil {
		p, err := c.client.CoreV1().Pods(ns).Get(ctx, "probe", metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			return time.Since(start), seen.list()
		}
		if n, err := c.client.CoreV1().Nodes().Get(ctx, c.node.Name(), metav1.GetOptions{}); err == nil {
			seen.add(n.Spec.Taints, time.Since(start))
		}
		select {
		case <-ctx.Done():
		case <-time.After(250 * time.Millisecond):
		}
	}
	return -1, seen.list()
}

// taintsSeen are the node's NoSchedule and NoExecute taints seen while the probe pod waited: when each
// was first and last seen, after the probe's creation.
type taintsSeen map[string][2]time.Duration

func (s taintsSeen) add(ts []corev1.Taint, at time.Duration) {
	for _, t := range ts {
		if t.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		k := t.Key + ":" + string(t.Effect)
		v, ok := s[k]
		if !ok {
			v[0] = at
		}
		v[1] = at
		s[k] = v
	}
}

// list is each taint with when it was seen, sorted by key.
func (s taintsSeen) list() []string {
	out := make([]string, 0, len(s))
	for k, v := range s {
		out = append(out, fmt.Sprintf("%s (seen %s to %s)", k, v[0].Round(time.Second), v[1].Round(time.Second)))
	}
	sort.Strings(out)
	return out
}
