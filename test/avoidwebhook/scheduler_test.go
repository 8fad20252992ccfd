package avoidwebhook

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	config "github.com/kube-pressure/pressure/internal/config/janitor"
	"github.com/kube-pressure/pressure/internal/janitor"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

const (
	minor     = "v1.34"
	releaseNS = "pressure"
	appNS     = "app"
	nodeA     = "node-a"
	nodeB     = "node-b"
)

// TestWebhookKeepsAnEvictedWorkloadOffTheNodeOnARealScheduler: on a 1.34 API server and scheduler, with
// the chart's webhook configuration and certificate and the janitor serving the webhook, an avoidance
// the agent records for a ReplicaSet on node A sends the ReplicaSet's next pod to node B although it
// prefers A, while another workload's pod still lands on A; with the webhook down (failurePolicy
// Ignore) the next pod is created anyway, unchanged, on A.
func TestWebhookKeepsAnEvictedWorkloadOffTheNodeOnARealScheduler(t *testing.T) {
	apiserver := clustertest.OlderAPIServer(t, minor)
	scheduler := clustertest.OlderScheduler(t, minor)
	host := clustertest.HostIP(t)
	objs := renderChart(t)
	cp := clustertest.ControlPlane(t, clustertest.WithOptions(func(o *cluster.ControlPlaneOptions) {
		o.APIServer, o.Scheduler = apiserver, scheduler
		o.ExtraAPIServerArgs = append(o.ExtraAPIServerArgs, "--enable-aggregator-routing=true")
		// No kubelet heartbeats: keep the node lifecycle controller from tainting the nodes mid-test.
		o.ExtraControllerManagerArgs = append(o.ExtraControllerManagerArgs, "--node-monitor-grace-period=30m")
	}))
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if v, err := c.Discovery().ServerVersion(); err != nil || !strings.HasPrefix(v.GitVersion, minor+".") {
		t.Fatalf("API server version %v (err %v), want %s.x", v, err, minor)
	}
	for _, ns := range []string{releaseNS, appNS} {
		if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	svc, files := installWebhook(ctx, t, cp, objs)
	stop, addr := startJanitor(t, cp, files, host)
	publishEndpoint(ctx, t, c, svc, addr)
	for _, n := range []string{nodeA, nodeB} {
		readyNode(ctx, t, c, n)
	}

	web := replicaSet(ctx, t, c, "web")
	other := replicaSet(ctx, t, c, "other")
	// The agent on node A evicted a pod of web: it records web's avoidance of A (AvoidanceParams).
	params := &loopbreaker.AvoidanceParams{Client: c, Namespace: releaseNS, Prefix: "pressure-agent-avoid-", Node: nodeA}
	if err := params.Write(ctx, []policy.Avoidance{{Owner: policy.Workload{Kind: "ReplicaSet", Name: web.Name, UID: string(web.UID)},
		Until: time.Now().Add(10 * time.Minute)}}); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "the webhook applies web's avoidance (dry-run pod of web)", func() error {
		p := podOf(web, "probe")
		got, err := c.CoreV1().Pods(appNS).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return err
		}
		if a := avoided(got); !slices.Equal(a, []string{nodeA}) {
			return fmt.Errorf("nodes avoided %v", a)
		}
		return nil
	})

	// The ReplicaSet controller creates web's next pod: mutated, and bound by the scheduler to B although
	// web prefers A.
	p := scaleAndBind(ctx, t, c, web, 1)
	if a := avoided(p); !slices.Equal(a, []string{nodeA}) || p.Spec.NodeName != nodeB {
		t.Errorf("web's new pod %s: avoids %v, bound to %q; want [%s], %s", p.Name, a, p.Spec.NodeName, nodeA, nodeB)
	}
	// The node is not closed to everyone: another workload that prefers A still lands there.
	q := scaleAndBind(ctx, t, c, other, 1)
	if a := avoided(q); len(a) != 0 || q.Spec.NodeName != nodeA {
		t.Errorf("other's new pod %s: avoids %v, bound to %q; want nothing, %s", q.Name, a, q.Spec.NodeName, nodeA)
	}

	// failurePolicy Ignore: with the webhook down, web's next pod is still created, unchanged, and goes
	// where web prefers.
	stop()
	if _, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		t.Fatalf("the webhook at %s still accepts connections after the janitor stopped", addr)
	}
	r := scaleAndBind(ctx, t, c, web, 2)
	if a := avoided(r); len(a) != 0 || r.Spec.NodeName != nodeA {
		t.Errorf("web's pod %s created with the webhook down: avoids %v, bound to %q; want nothing, %s", r.Name, a, r.Spec.NodeName, nodeA)
	}
}

// renderChart renders the chart for Kubernetes 1.34 with dryRun=false (helm template) and checks it
// chose the webhook.
func renderChart(t *testing.T) []*unstructured.Unstructured {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	root, h := chartinstall.HelmForTest(ctx, t)
	out, err := h.Run(ctx, "template", "pressure", chartinstall.ChartDir(root), "--namespace", releaseNS,
		"--kube-version", "1.34.4", "--set", "dryRun=false")
	if err != nil {
		t.Fatalf("helm template: %v\n%s", err, out)
	}
	var objs []*unstructured.Unstructured
	for _, doc := range strings.Split(out, "\n---") {
		m := map[string]any{}
		if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
			t.Fatal(err)
		}
		if len(m) > 0 {
			objs = append(objs, &unstructured.Unstructured{Object: m})
		}
	}
	for _, o := range objs {
		if o.GetKind() == "MutatingAdmissionPolicy" {
			t.Fatalf("the chart renders a MutatingAdmissionPolicy for 1.34")
		}
	}
	return objs
}

func find(t *testing.T, objs []*unstructured.Unstructured, kind string) *unstructured.Unstructured {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() == kind && (kind != "Service" || strings.HasSuffix(o.GetName(), "-avoidance-webhook")) {
			return o
		}
	}
	t.Fatalf("the chart renders no %s for the webhook on 1.34", kind)
	return nil
}

func convert[T any](t *testing.T, o *unstructured.Unstructured) *T {
	t.Helper()
	var v T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &v); err != nil {
		t.Fatal(err)
	}
	return &v
}

// installWebhook creates the chart's MutatingWebhookConfiguration, Secret and Service (without its
// selector: the test publishes the endpoint itself), and writes the Secret's key pair to files as the
// janitor pod's mount does. It returns the Service and the files' directory.
func installWebhook(ctx context.Context, t *testing.T, cp *cluster.ControlPlane, objs []*unstructured.Unstructured) (*corev1.Service, string) {
	t.Helper()
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	secret := convert[corev1.Secret](t, find(t, objs, "Secret"))
	if _, err := c.CoreV1().Secrets(releaseNS).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, k := range []string{"tls.crt", "tls.key"} {
		if err := os.WriteFile(filepath.Join(dir, k), secret.Data[k], 0o600); err != nil {
			t.Fatal(err)
		}
	}
	svc := convert[corev1.Service](t, find(t, objs, "Service"))
	svc.Spec.Selector = nil
	if svc, err = c.CoreV1().Services(releaseNS).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mwc := convert[admissionregistrationv1.MutatingWebhookConfiguration](t, find(t, objs, "MutatingWebhookConfiguration"))
	if base64.StdEncoding.EncodeToString(mwc.Webhooks[0].ClientConfig.CABundle) != base64.StdEncoding.EncodeToString(secret.Data["ca.crt"]) {
		t.Fatalf("the webhook configuration's caBundle is not the Secret's ca.crt")
	}
	if _, err := c.AdmissionregistrationV1().MutatingWebhookConfigurations().Create(ctx, mwc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return svc, dir
}

// startJanitor runs the janitor in this process (dry-run, no leader election, only the webhook served,
// on host's address) and returns a func that stops it and waits, and the webhook's address.
func startJanitor(t *testing.T, cp *cluster.ControlPlane, certDir, host string) (func(), string) {
	t.Helper()
	jc := &config.JanitorConfiguration{}
	config.SetDefaults(jc)
	cfg := config.Convert(jc)
	cfg.DryRun, cfg.LeaderElection.Enabled, cfg.MetricsAddr, cfg.HealthProbeAddr = true, false, "0", "0"
	cfg.AvoidanceWebhook = config.AvoidanceWebhookConfig{Addr: net.JoinHostPort(host, "0"), Namespace: releaseNS,
		CertFile: filepath.Join(certDir, "tls.crt"), KeyFile: filepath.Join(certDir, "tls.key")}
	ctx, cancel := context.WithCancel(context.Background())
	addrs := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- janitor.RunWithOptions(ctx, cfg, janitor.Options{RESTConfig: cp.RESTConfig(), OnWebhook: func(a string) { addrs <- a }})
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("janitor: %v", err)
		}
	}
	t.Cleanup(stop)
	select {
	case a := <-addrs:
		return stop, a
	case err := <-done:
		t.Fatalf("janitor stopped before serving the webhook: %v", err)
	case <-time.After(time.Minute):
		t.Fatalf("janitor did not serve the webhook within a minute")
	}
	return nil, ""
}

// publishEndpoint writes an EndpointSlice of svc holding addr, ready.
func publishEndpoint(ctx context.Context, t *testing.T, c kubernetes.Interface, svc *corev1.Service, addr string) {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: svc.Name + "-test", Namespace: releaseNS,
			Labels: map[string]string{discoveryv1.LabelServiceName: svc.Name}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{host}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To(svc.Spec.Ports[0].Name), Port: ptr.To(int32(n)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := c.DiscoveryV1().EndpointSlices(releaseNS).Create(ctx, es, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// readyNode creates a schedulable Node with room for pods, Ready, and waits until it has no taint.
func readyNode(ctx context.Context, t *testing.T, c kubernetes.Interface, name string) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{corev1.LabelHostname: name}}}
	if _, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		room := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"),
			corev1.ResourcePods: resource.MustParse("110")}
		n.Status.Capacity, n.Status.Allocatable = room, room
		now := metav1.Now()
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: now, LastTransitionTime: now}}
		_, err = c.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, "node "+name+" untainted", func() error {
		n, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if len(n.Spec.Taints) > 0 {
			return fmt.Errorf("taints %v", n.Spec.Taints)
		}
		return nil
	})
}

// replicaSet creates a ReplicaSet of no replicas in appNS whose pods prefer node A.
func replicaSet(ctx context.Context, t *testing.T, c kubernetes.Interface, name string) *appsv1.ReplicaSet {
	t.Helper()
	labels := map[string]string{"app": name}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNS},
		Spec: appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(0)), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: podSpec()}}}
	rs, err := c.AppsV1().ReplicaSets(appNS).Create(ctx, rs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func podSpec() corev1.PodSpec {
	return corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.10"}},
		Affinity: &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{
			{Weight: 100, Preference: corev1.NodeSelectorTerm{MatchExpressions: []corev1.NodeSelectorRequirement{
				{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{nodeA}}}}}}}},
	}
}

// podOf is a pod of rs as its controller would create it.
func podOf(rs *appsv1.ReplicaSet, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: appNS, Labels: rs.Spec.Template.Labels,
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs.Name, UID: rs.UID, Controller: ptr.To(true)}}},
		Spec: podSpec()}
}

// scaleAndBind scales rs up by one to replicas and returns the pod the scale created, once the scheduler
// has bound every pod of rs. The new pod is the one that was not there before: creation timestamps have
// a resolution of a second, so two pods created within one second cannot be told apart by age.
func scaleAndBind(ctx context.Context, t *testing.T, c kubernetes.Interface, rs *appsv1.ReplicaSet, replicas int32) *corev1.Pod {
	t.Helper()
	before, err := c.CoreV1().Pods(appNS).List(ctx, metav1.ListOptions{LabelSelector: "app=" + rs.Name})
	if err != nil {
		t.Fatal(err)
	}
	old := map[string]bool{}
	for _, p := range before.Items {
		old[p.Name] = true
	}
	if len(old) != int(replicas)-1 {
		t.Fatalf("%s has %d pods before scaling to %d; want %d", rs.Name, len(old), replicas, replicas-1)
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := c.AppsV1().ReplicaSets(appNS).Get(ctx, rs.Name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		cur.Spec.Replicas = ptr.To(replicas)
		_, err = c.AppsV1().ReplicaSets(appNS).Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var created *corev1.Pod
	waitFor(ctx, t, fmt.Sprintf("%d pods of %s bound", replicas, rs.Name), func() error {
		pods, err := c.CoreV1().Pods(appNS).List(ctx, metav1.ListOptions{LabelSelector: "app=" + rs.Name})
		if err != nil {
			return err
		}
		if len(pods.Items) != int(replicas) {
			return fmt.Errorf("%d pods", len(pods.Items))
		}
		created = nil
		for i := range pods.Items {
			p := &pods.Items[i]
			if p.Spec.NodeName == "" {
				return fmt.Errorf("pod %s not bound yet", p.Name)
			}
			if !old[p.Name] {
				if created != nil {
					return fmt.Errorf("pods %s and %s are both new", created.Name, p.Name)
				}
				created = p
			}
		}
		if created == nil {
			return fmt.Errorf("no new pod among %d", len(pods.Items))
		}
		return nil
	})
	t.Logf("%s's new pod %s: bound to %s, required node affinity %+v", rs.Name, created.Name, created.Spec.NodeName, required(created))
	return created
}

func required(p *corev1.Pod) *corev1.NodeSelector {
	if p.Spec.Affinity == nil || p.Spec.Affinity.NodeAffinity == nil {
		return nil
	}
	return p.Spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
}

// avoided lists the nodes excluded by metadata.name NotIn in p's required terms, one entry per term.
func avoided(p *corev1.Pod) []string {
	var out []string
	if r := required(p); r != nil {
		for _, term := range r.NodeSelectorTerms {
			for _, f := range term.MatchFields {
				if f.Key == "metadata.name" && f.Operator == corev1.NodeSelectorOpNotIn {
					out = append(out, f.Values...)
				}
			}
		}
	}
	return out
}

func waitFor(ctx context.Context, t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
