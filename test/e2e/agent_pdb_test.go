package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/agent"
)

// Scenario 2: a PodDisruptionBudget blocks a soft eviction (honoured, no fallback); when the hard
// threshold is reached the ladder falls back, after pdbFallbackWait, to a DELETE.
//
// The agent reads its kubelet thresholds from a file here (--kubelet-config), the node's hard ones plus a
// soft allocatableMemory.available<800Mi with a 2s grace period, so the soft threshold is crossed first.
func TestAgentPDBBlocksSoftEvictionAndHardFallsBack(t *testing.T) {
	e := requireNode(t)
	resetNode(t, e)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := createNamespace(ctx, t, e, "agent-pdb")
	kc := filepath.Join(t.TempDir(), "kubelet.yaml")
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
enforceNodeAllocatable: [pods]
evictionHard: {memory.available: %[1]s, allocatableMemory.available: %[1]s}
evictionSoft: {allocatableMemory.available: 800Mi}
evictionSoftGracePeriod: {allocatableMemory.available: 2s}
`, evictionThreshold)
	if err := os.WriteFile(kc, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, e, func(c *agent.Config) { c.KubeletConfigFile = kc; c.Ladder.PDBFallbackWait = 2 * time.Second })
	pdb := &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "protect", Namespace: ns},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptrIntStr(1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "protected"}}},
	}
	if _, err := e.client.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// 64Mi/s to 1700Mi: soft (800Mi left) at about 1248Mi, hard (456Mi left) at about 1592Mi, holds at
	// 348Mi left, above the kubelet's 200Mi.
	p := stressPod(ns, "stress", []string{"mem", "--rate", "64Mi", "--target", "1700Mi"}, "", false)
	p.Labels = map[string]string{"app": "protected"}
	createPod(ctx, t, e, p)
	poll(ctx, t, "soft eviction refused by the PDB", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEvictionFailed)
		return len(evs) > 0, fmt.Sprint(summarize(evs))
	})
	refused := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEvictionFailed)[0]
	if !strings.Contains(refused.Message, "blocked-by-pdb") || !strings.Contains(refused.Message, "(soft)") {
		t.Errorf("refusal event %q: want blocked-by-pdb on a soft threshold", refused.Message)
	}
	poll(ctx, t, "hard eviction falls back to DELETE", func() (bool, string) {
		evs := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)
		return len(evs) > 0, fmt.Sprint(summarize(evs))
	})
	ev := eventsIn(ctx, t, e, ns, actuate.ReasonPressureEviction)[0]
	if !strings.Contains(ev.Message, "via delete") || !strings.Contains(ev.Message, "(hard)") {
		t.Errorf("eviction event %q: want the delete rung on a hard threshold", ev.Message)
	}
	poll(ctx, t, "stress pod gone", func() (bool, string) {
		_, err := e.client.CoreV1().Pods(ns).Get(ctx, "stress", metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err)
	})
	t.Logf("refusal: %s\neviction: %s\nrequests: %s", refused.Message, ev.Message,
		strings.ReplaceAll(a.metricLines("pressure_agent_evictions_total"), "\n", "; "))
}

func ptrIntStr(v int) *intstr.IntOrString {
	x := intstr.FromInt32(int32(v))
	return &x
}
