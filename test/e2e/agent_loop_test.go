package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/agent"
)

// Scenario 4: a Deployment's offending pod is evicted; its replacement is kept off the node by the taint
// (Pending on this single-node cluster); when the taint lifts after the cool-down the replacement lands,
// the loop is reported on the owner, and the taint lifts again after the loop's cool-down.
func TestAgentTaintKeepsReplacementOffAndReportsLoop(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const cooldown = 20 * time.Second
	a := startAgent(t, e, func(c *agent.Config) {
		c.TaintCooldown = cooldown
		c.Ledger.Cooldown = cooldown
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
	poll(ctx, t, "first hog pod evicted by the agent", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
		return len(evs) > 0, fmt.Sprint(summarize(evs))
	})
	evictedAt := time.Now().Add(-time.Second).Truncate(time.Second) // events carry whole seconds
	poll(ctx, t, "node tainted", func() (bool, string) { return nodeTaint(ctx, t, e) != nil, "" })
	poll(ctx, t, "replacement Pending, unschedulable because of the taint", func() (bool, string) {
		for _, p := range hogPods(ctx, t, e, ns, sel) {
			if p.DeletionTimestamp != nil {
				continue
			}
			for _, c := range p.Status.Conditions {
				// The scheduler says "1 node(s) had untolerated taint(s)"; ours is the node's only taint.
				if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && strings.Contains(c.Message, "untolerated taint") {
					tn := nodeTaint(ctx, t, e)
					t.Logf("replacement %s: %s (node taint %v)", p.Name, c.Message, tn)
					return p.Spec.NodeName == "" && tn != nil, ""
				}
			}
		}
		return false, "no unschedulable replacement yet"
	})
	// The replacement lands as soon as the taint lifts, and the loop puts the taint back at once: look
	// for the removal event rather than poll for a moment without the taint.
	var lifted time.Duration
	poll(ctx, t, "taint lifted after the cool-down", func() (bool, string) {
		for _, ev := range eventsIn(ctx, t, e, "default", actuate.ReasonLoopTaintRemoved) {
			if ev.InvolvedObject.Name == e.node.Name() && ev.LastTimestamp.Time.After(evictedAt) {
				lifted = ev.LastTimestamp.Time.Sub(evictedAt)
				return true, ""
			}
		}
		return nodeTaint(ctx, t, e) == nil, ""
	})
	if lifted == 0 {
		lifted = time.Since(evictedAt)
	}
	if lifted < cooldown-time.Second {
		t.Errorf("taint lifted %s after the eviction, before the %s cool-down", lifted.Round(time.Millisecond), cooldown)
	}
	t.Logf("taint lifted %s after the eviction", lifted.Round(time.Millisecond))
	poll(ctx, t, "loop reported on the owner", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonEvictionLoop)
		return len(evs) > 0, fmt.Sprint(summarize(evs))
	})
	loop := eventsIn(ctx, t, e, ns, actuate.ReasonEvictionLoop)[0]
	t.Logf("loop event on %s/%s: %s", loop.InvolvedObject.Kind, loop.InvolvedObject.Name, loop.Message)
	poll(ctx, t, "loops metric", func() (bool, string) {
		m := a.metricLines("pressure_agent_eviction_loops_total")
		return m != "" && !strings.HasSuffix(m, " 0"), m
	})
	if err := e.client.AppsV1().Deployments(ns).Delete(ctx, "hog", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, "taint lifted after the loop's cool-down", func() (bool, string) { return nodeTaint(ctx, t, e) == nil, "" })
}

func nodeTaint(ctx context.Context, t *testing.T, e *env) *corev1.Taint {
	n, err := e.client.CoreV1().Nodes().Get(ctx, e.node.Name(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tn := range n.Spec.Taints {
		if tn.Key == actuate.TaintKey {
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
