package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/agent"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// Scenario 4 (issue 12): a Deployment's memory hog is evicted. Its replacement gets the chart's node
// anti-affinity and stays Pending on this single-node cluster (it would go to another node), while
// unrelated pods created right after the eviction are scheduled on the node at once: the node is only
// tainted while the pressure lasts, plus the short hysteresis.
func TestAgentKeepsTheEvictedWorkloadOffWhileOtherPodsScheduleAtOnce(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const hysteresis = 10 * time.Second
	paramsNS := installAvoidancePolicy(ctx, t, e)
	a := startAgent(t, e, func(c *agent.Config) {
		c.Settings.TaintHysteresis = hysteresis
		c.AvoidanceNamespace, c.AvoidancePrefix = paramsNS, avoidancePrefix
	})
	ns := createNamespace(ctx, t, e, "agent-loop")
	sel := map[string]string{"app": "hog"}
	tmpl := stressPod(ns, "", []string{"mem", "--rate", "256Mi", "--target", "1700Mi"}, "", false)
	tmpl.Spec.RestartPolicy = corev1.RestartPolicyAlways
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "hog", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: sel}, Spec: tmpl.Spec}},
	}
	if _, err := e.client.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = e.client.AppsV1().Deployments(ns).Delete(context.Background(), "hog", metav1.DeleteOptions{})
	})
	poll(ctx, t, "hog pod evicted by the agent", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
		return len(evs) > 0, fmt.Sprint(summarize(evs))
	})
	evicted := time.Now()
	var others []string
	for i := range 3 {
		p := stressPod(ns, fmt.Sprintf("unrelated-%d", i), []string{"mem", "--rate", "16Mi", "--target", "16Mi"}, "", false)
		createPod(ctx, t, e, p)
		others = append(others, p.Name)
	}
	scheduled := waitScheduledOnNode(ctx, t, e, ns, others...).Sub(evicted)
	t.Logf("unrelated pods created right after the eviction scheduled %s after it", scheduled.Round(time.Millisecond))
	if limit := hysteresis + 20*time.Second; scheduled > limit {
		t.Errorf("unrelated pods scheduled %s after the eviction, want within the taint hysteresis and a sync (%s)", scheduled, limit)
	}
	poll(ctx, t, "replacement Pending, kept off the node by its node affinity", func() (bool, string) {
		for _, p := range hogPods(ctx, t, e, ns, sel) {
			if p.DeletionTimestamp != nil {
				continue
			}
			for _, c := range p.Status.Conditions {
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "affinity") {
					t.Logf("replacement %s: %s", p.Name, c.Message)
					return p.Spec.NodeName == "", ""
				}
			}
		}
		return false, "no replacement kept off yet"
	})
	checkExplainListsTheAvoidance(ctx, t, e, "ReplicaSet/"+ns+"/hog-", evicted)
	poll(ctx, t, "no pressure taint once the pressure is over", func() (bool, string) { return nodeTaint(ctx, t, e) == nil, "" })
	if m := a.metricLines("pressure_agent_avoidances"); !strings.HasSuffix(m, " 1") {
		t.Errorf("avoidances metric %q, want 1", m)
	}
}

// checkExplainListsTheAvoidance checks that `kubectl pressure explain NODE` shows the agent's avoidance
// of the node by the workload (kind/namespace/name prefix), ending one cooldown after the eviction.
func checkExplainListsTheAvoidance(ctx context.Context, t *testing.T, e *env, workload string, evicted time.Time) {
	t.Helper()
	out, err := kubectlPressure(ctx, t, e, "explain", e.node.Name(), "-o", "json")
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	var r struct {
		Avoidances []struct {
			Workload string
			Until    time.Time
			Loop     bool
		} `json:"avoidances"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("explain -o json: %v", err)
	}
	cooldown := policy.DefaultLoopCooldown
	if len(r.Avoidances) != 1 || !strings.HasPrefix(r.Avoidances[0].Workload, workload) || r.Avoidances[0].Loop ||
		r.Avoidances[0].Until.Before(evicted.Add(cooldown-10*time.Second)) || r.Avoidances[0].Until.After(evicted.Add(cooldown+time.Second)) {
		t.Errorf("explain avoidances %+v, want one of %s... ending about %s after the eviction at %s", r.Avoidances, workload,
			cooldown, evicted.UTC().Format(time.RFC3339))
	}
	text, err := kubectlPressure(ctx, t, e, "explain", e.node.Name())
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	if i := strings.Index(text, "AVOIDANCES"); i < 0 || !strings.Contains(text[i:], workload) {
		t.Errorf("explain text has no AVOIDANCES section naming %s:\n%s", workload, text)
	} else {
		section, _, _ := strings.Cut(text[i:], "\n\n")
		t.Logf("explain %s:\n%s", e.node.Name(), section)
	}
}

// waitScheduledOnNode waits until the pods are all bound to the package node and returns when that was
// seen.
func waitScheduledOnNode(ctx context.Context, t *testing.T, e *env, ns string, names ...string) time.Time {
	t.Helper()
	poll(ctx, t, "pods scheduled on the node", func() (bool, string) {
		var pending []string
		for _, name := range names {
			p, err := e.client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if p.Spec.NodeName != e.node.Name() {
				pending = append(pending, fmt.Sprintf("%s %v", name, p.Status.Conditions))
			}
		}
		return len(pending) == 0, strings.Join(pending, "; ")
	})
	return time.Now()
}

// avoidancePrefix is the ConfigMap prefix the test release of the chart uses.
const avoidancePrefix = "pressure-agent-avoid-"

// installAvoidancePolicy creates the chart's MutatingAdmissionPolicy and binding (helm template of
// templates/agent-avoidance.yaml, release "pressure" in namespace pressure-system), and the namespace,
// and returns the namespace. The policy stays for the later tests: it only changes pods of workloads
// some agent avoids.
func installAvoidancePolicy(ctx context.Context, t *testing.T, e *env) string {
	t.Helper()
	const ns = "pressure-system"
	root, err := os.Getwd()
	if err == nil {
		root, err = cluster.RepoRoot(root)
	}
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(root, "hack", "install-helm.sh")).Output()
	if err != nil {
		clustertest.SkipOrFail(t, "hack/install-helm.sh could not install helm (needs the Go module proxy): %v", err)
	}
	manifest, err := exec.Command(strings.TrimSpace(string(out)), "template", "pressure", filepath.Join(root, "deploy", "helm", "pressure"),
		"--namespace", ns, "--kube-version", "1.37.2", "--set", "dryRun=false", // a dry run renders no avoidance policy
		"--show-only", "templates/agent-avoidance.yaml").Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("helm template: %v: %s", err, stderr)
	}
	if _, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	adm := e.client.AdmissionregistrationV1()
	for _, doc := range strings.Split(string(manifest), "\n---") {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &meta); err != nil {
			t.Fatalf("chart manifest: %v", err)
		}
		switch meta.Kind {
		case "MutatingAdmissionPolicy":
			var p admissionregistrationv1.MutatingAdmissionPolicy
			if err = yaml.UnmarshalStrict([]byte(doc), &p); err == nil {
				_, err = adm.MutatingAdmissionPolicies().Create(ctx, &p, metav1.CreateOptions{})
			}
		case "MutatingAdmissionPolicyBinding":
			var b admissionregistrationv1.MutatingAdmissionPolicyBinding
			if err = yaml.UnmarshalStrict([]byte(doc), &b); err == nil {
				_, err = adm.MutatingAdmissionPolicyBindings().Create(ctx, &b, metav1.CreateOptions{})
			}
		}
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("create %s: %v", meta.Kind, err)
		}
	}
	return ns
}

func nodeTaint(ctx context.Context, t *testing.T, e *env) *corev1.Taint {
	n, err := e.client.CoreV1().Nodes().Get(ctx, e.node.Name(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range n.Spec.Taints {
		if tn.Key == loopbreaker.TaintKey {
			return &tn
		}
	}
	return nil
}

func hogPods(ctx context.Context, t *testing.T, e *env, ns string, sel map[string]string) []corev1.Pod {
	list, err := e.client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(sel).String()})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}
