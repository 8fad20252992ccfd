package uninstall

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

const (
	ns  = "pressure"
	dsN = "pressure-agent"
	// hold is a finalizer that keeps the DaemonSet from going, as pods that never stop (an
	// unreachable node) would.
	hold = "test.kube-pressure.io/hold"
)

var (
	ours      = corev1.Taint{Key: loopbreaker.TaintKey, Value: "memory.available", Effect: corev1.TaintEffectNoSchedule}
	oursExec  = corev1.Taint{Key: loopbreaker.TaintKey, Value: "x", Effect: corev1.TaintEffectNoExecute}
	otherTnt  = corev1.Taint{Key: "example.com/dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}
	customKey = corev1.Taint{Key: "example.com/evicting", Value: "memory.available", Effect: corev1.TaintEffectNoSchedule}
)

// The cleanup against a real API server and controller manager (its garbage collector carries out
// the foreground deletion).
func TestCleanupOnTheRealAPIServer(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	c, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Run("the taint goes from every node that has it and nothing else changes", func(t *testing.T) {
		nodes := map[string][]corev1.Taint{
			"a-tainted":       {otherTnt, ours},
			"b-tainted":       {ours},
			"c-clean":         {otherTnt},
			"d-other-effect":  {oursExec},
			"e-other-key":     {customKey},
			"f-tainted-first": {ours, otherTnt},
		}
		for name, ts := range nodes {
			createNode(ctx, t, c, name, ts)
		}
		var log bytes.Buffer
		r, err := cleaner(c, &log, loopbreaker.TaintKey, time.Minute).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Stopped {
			t.Errorf("no DaemonSet: want Stopped")
		}
		if got, want := strings.Join(r.Untainted, ","), "a-tainted,b-tainted,f-tainted-first"; got != want {
			t.Errorf("untainted %s, want %s", got, want)
		}
		want := map[string][]corev1.Taint{"a-tainted": {otherTnt}, "b-tainted": nil, "c-clean": {otherTnt},
			"d-other-effect": {oursExec}, "e-other-key": {customKey}, "f-tainted-first": {otherTnt}}
		for name, ts := range want {
			requireTaints(ctx, t, c, name, ts)
		}
		if !strings.Contains(log.String(), "taint removed") || !strings.Contains(log.String(), "node=b-tainted") {
			t.Errorf("log names no removed taint of b-tainted:\n%s", log.String())
		}
		deleteNodes(ctx, t, c, nodes)
	})
	t.Run("the daemonset is deleted and waited for before the taints go", func(t *testing.T) {
		createNode(ctx, t, c, "g-tainted", []corev1.Taint{ours})
		createDaemonSet(ctx, t, c, nil)
		r, err := cleaner(c, nil, loopbreaker.TaintKey, time.Minute).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Stopped {
			t.Errorf("the DaemonSet went: want Stopped (took %s)", r.StopTook)
		}
		if _, err := c.AppsV1().DaemonSets(ns).Get(ctx, dsN, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("get the DaemonSet after the cleanup: %v, want not found", err)
		}
		requireTaints(ctx, t, c, "g-tainted", nil)
		deleteNodes(ctx, t, c, map[string][]corev1.Taint{"g-tainted": nil})
	})
	t.Run("agents that never stop delay the taints' removal only by the stop timeout", func(t *testing.T) {
		createNode(ctx, t, c, "h-tainted", []corev1.Taint{customKey})
		createDaemonSet(ctx, t, c, []string{hold})
		var log bytes.Buffer
		r, err := cleaner(c, &log, customKey.Key, 2*time.Second).Run(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r.Stopped || r.StopTook < 2*time.Second {
			t.Errorf("the DaemonSet is held: want not Stopped after the 2s timeout, got Stopped=%t after %s", r.Stopped, r.StopTook)
		}
		if got := strings.Join(r.Untainted, ","); got != "h-tainted" {
			t.Errorf("untainted %q, want h-tainted", got)
		}
		requireTaints(ctx, t, c, "h-tainted", nil)
		if !strings.Contains(log.String(), "agents still stopping") {
			t.Errorf("log does not say the agents were still stopping:\n%s", log.String())
		}
		if got := r.Summary(ns+"/"+dsN, customKey.Key); !strings.Contains(got, "still stopping") || !strings.Contains(got, "h-tainted") {
			t.Errorf("summary %q: want it to say the agents were still stopping and name h-tainted", got)
		}
		patch := []byte(`{"metadata":{"finalizers":null}}`)
		if _, err := c.AppsV1().DaemonSets(ns).Patch(ctx, dsN, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		deleteNodes(ctx, t, c, map[string][]corev1.Taint{"h-tainted": nil})
	})
}

func cleaner(c kubernetes.Interface, log *bytes.Buffer, key string, stop time.Duration) Cleaner {
	var h slog.Handler = slog.DiscardHandler
	if log != nil {
		h = slog.NewTextHandler(log, nil)
	}
	return Cleaner{Client: c, Namespace: ns, DaemonSet: dsN, TaintKey: key, StopTimeout: stop, Poll: 100 * time.Millisecond,
		Log: slog.New(h)}
}

func createNode(ctx context.Context, t *testing.T, c kubernetes.Interface, name string, ts []corev1.Taint) {
	t.Helper()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: ts}}
	if _, err := c.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func deleteNodes(ctx context.Context, t *testing.T, c kubernetes.Interface, nodes map[string][]corev1.Taint) {
	t.Helper()
	for name := range nodes {
		if err := c.CoreV1().Nodes().Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// createDaemonSet creates the agent DaemonSet; its pods select no node, so only finalizers hold it.
func createDaemonSet(ctx context.Context, t *testing.T, c kubernetes.Interface, finalizers []string) {
	t.Helper()
	labels := map[string]string{"app": dsN}
	ds := &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: dsN, Namespace: ns, Finalizers: finalizers},
		Spec: appsv1.DaemonSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					NodeSelector: map[string]string{"example.com/no-such-node": "true"},
					Containers:   []corev1.Container{{Name: "agent", Image: "pressure.local/pressure-agent:test"}},
				},
			},
		},
	}
	if _, err := c.AppsV1().DaemonSets(ns).Create(ctx, ds, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// requireTaints fails t unless node has exactly the taints want, in order, besides Kubernetes' own.
func requireTaints(ctx context.Context, t *testing.T, c kubernetes.Interface, node string, want []corev1.Taint) {
	t.Helper()
	n, err := c.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []corev1.Taint
	for _, tn := range n.Spec.Taints {
		if !strings.HasPrefix(tn.Key, "node.kubernetes.io/") { // the API server's and node controller's own
			got = append(got, tn)
		}
	}
	if len(got) != len(want) {
		t.Errorf("node %s taints %v, want %v", node, got, want)
		return
	}
	for i := range want {
		if got[i].Key != want[i].Key || got[i].Value != want[i].Value || got[i].Effect != want[i].Effect {
			t.Errorf("node %s taints %v, want %v", node, got, want)
			return
		}
	}
}
