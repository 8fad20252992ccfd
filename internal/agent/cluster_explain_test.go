package agent

// Level-1 acceptance of issue 28's "one input, three users": kubectl pressure explain --local, run on the
// node the agent reads (the same cgroup and proc trees, the same API objects), says what the agent then
// does. Explain runs first, on the node as it is; the agent then starts on the same node and acts; the
// test compares explain's plan with the agent's own actions (what it evicted, through which rung, and
// the avoidance its ledger records).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/utils/ptr"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/cli"
	"github.com/kube-pressure/pressure/internal/explain"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// explainWait is the PDB fallback wait of both the agent and the agent configuration explain reads.
const explainWait = 300 * time.Millisecond

func TestExplainShowsWhatTheAgentDoesOnTheSameNode(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	client, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	agentConfig := filepath.Join(t.TempDir(), "agent.yaml")
	if err := os.WriteFile(agentConfig, []byte("apiVersion: pressure.kube-pressure.io/v1alpha1\nkind: AgentConfiguration\n"+
		"eviction:\n  pdbFallbackWait: "+explainWait.String()+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("a PDB-protected victim: explain names it and the PDB wait and DELETE the agent then carries out", func(t *testing.T) {
		w := newWorld(t, client, "node-explain-pdb")
		labels := map[string]string{"app": "guarded"}
		guarded := w.runningPod("guarded", labels, 1550*mi) // 2048 - 1550 - 450 = 48Mi available: pressure
		w.pod("burst", "burstable", "50Mi", 300*mi)
		w.pod("guar", "guaranteed", "200Mi", 150*mi)
		w.pdb("guard", labels)
		ps := w.explain(cp.Kubeconfig(), agentConfig)
		if len(ps.Victims) != 1 || ps.Victims[0].Pod != w.ns+"/guarded" {
			t.Fatalf("explain's victims %+v, want only %s/guarded", ps.Victims, w.ns)
		}
		if got := ps.Victims[0].IfRefused; !strings.Contains(got, "waits "+explainWait.String()) || !strings.Contains(got, "DELETEs the pod") {
			t.Errorf("explain's ifRefused %q, want the %s wait and the DELETE fallback", got, explainWait)
		}

		cfg := w.config(false)
		cfg.Ladder.PDBFallbackWait = explainWait
		r := w.start(cfg, cp.RESTConfig())
		eventually(t, 30*time.Second, "guarded evicted", func() error { return w.onlyTerminating("guarded") })
		// The ledger's entry is written after the DELETE that made the pod terminating.
		eventually(t, 10*time.Second, "guarded's ledger entry", func() error {
			e, ok, err := w.ledgerEntry(guarded.UID)
			if err == nil && (!ok || e.Rung != "delete") {
				err = fmt.Errorf("the agent's ledger entry of guarded %+v (found %v), want rung delete: the PDB refused, the agent deleted", e, ok)
			}
			return err
		})
		r.stop(t)
		w.release("guarded", string(guarded.UID))
	})
	t.Run("a workload under avoidance: explain names the victim and the escalated avoidance the agent then records", func(t *testing.T) {
		w := newWorld(t, client, "node-explain-avoid")
		ctx := context.Background()
		cm, err := client.CoreV1().ConfigMaps(w.ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "workload"}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID, Controller: ptr.To(true)}
		// An earlier agent evicted app-1 a minute ago and saw it gone: its workload avoids the node.
		earlier := time.Now().Add(-time.Minute).Truncate(time.Second)
		w.writeLedger(policy.HistoryEntry{UID: "uid-app-1", Namespace: w.ns, Name: "app-1",
			Owner: policy.Workload{Kind: "ConfigMap", Namespace: w.ns, Name: cm.Name, UID: string(cm.UID)}, Signal: "allocatableMemory.available",
			Rung: "eviction-api", At: earlier, Created: earlier.Add(-time.Hour)})
		app2 := w.ownedPod("app-2", ref, 1950*mi) // the replacement, created after that eviction: 98Mi available
		ps := w.explain(cp.Kubeconfig(), agentConfig)
		if len(ps.Victims) != 1 || ps.Victims[0].Pod != w.ns+"/app-2" {
			t.Fatalf("explain's victims %+v, want only %s/app-2", ps.Victims, w.ns)
		}
		said := ps.Victims[0].Avoidance
		for _, want := range []string{"already avoids the node", "an eviction loop", "escalated"} {
			if !strings.Contains(said, want) {
				t.Errorf("explain's avoidance %q lacks %q", said, want)
			}
		}
		until := rfc3339.FindAllString(said, -1)
		if len(until) == 0 {
			t.Fatalf("explain's avoidance %q names no end", said)
		}
		predicted, err := time.Parse(time.RFC3339, until[len(until)-1])
		if err != nil {
			t.Fatal(err)
		}

		// The agent reads its stored ledger in the background after it starts (NewPendingLedger); a sync
		// after the pod list synced reads it first if it is still pending (ledgerload.go).
		r := w.start(w.config(false), cp.RESTConfig())
		eventually(t, 30*time.Second, "app-2 evicted", func() error { return w.onlyTerminating("app-2") })
		var got policy.Avoidance
		eventually(t, 10*time.Second, "the escalated avoidance in the ledger", func() error {
			l, err := w.ledger()
			if err != nil {
				return err
			}
			got = l.Avoidance(policy.Workload{UID: string(cm.UID)})
			if !got.Loop {
				return fmt.Errorf("avoidance %+v, want an escalated one", got)
			}
			return nil
		})
		// The agent evicts within seconds of explain's prediction (explain's now: its own clock).
		if d := got.Until.Sub(predicted); d < -time.Second || d > 30*time.Second {
			t.Errorf("the agent's avoidance ends %s, explain predicted %s (%s apart)", got.Until, predicted, d)
		}
		r.stop(t)
		w.release("app-2", string(app2.UID))
	})
	t.Run("a pod the ledger holds in flight: explain credits it and evicts nothing, as the agent", func(t *testing.T) {
		w := newWorld(t, client, "node-explain-flight")
		// An earlier agent SIGKILLed stress on the node 10s ago (the API was unreachable): the pod is still
		// listed and running, its cgroup not yet emptied; its ledger entry is not settled.
		stress := w.pod("stress", "besteffort", "", 1000*mi)
		w.pod("burst", "burstable", "50Mi", 300*mi)
		w.pod("guar", "guaranteed", "200Mi", 150*mi)
		w.writeLedgerEntry(policy.HistoryEntry{UID: string(stress.UID), Namespace: w.ns, Name: "stress", Signal: "allocatableMemory.available",
			Rung: "cgroup-kill", At: time.Now().Add(-10 * time.Second)}, false)
		// The agent reads its ledger in the background after it starts (NewPendingLedger), and before a
		// decision once the pod list synced (ledgerload.go). The pressure comes once the agent has run a
		// while, so explain and the agent both see the ledger.
		r := w.start(w.config(false), cp.RESTConfig())
		w.waitReady(r)
		time.Sleep(3 * time.Second)
		w.tree.setPod(string(stress.UID), "besteffort", 1550*mi) // 48Mi available
		ps := w.explain(cp.Kubeconfig(), agentConfig)
		if len(ps.Victims) != 0 {
			t.Errorf("explain's victims %+v, want none: stress is in flight (credited)", ps.Victims)
		}
		if len(ps.Credits) != 1 || ps.Credits[0].Pod != w.ns+"/stress" {
			t.Errorf("explain's credits %+v, want stress's", ps.Credits)
		}
		time.Sleep(3 * time.Second) // three syncs under the same read
		if err := w.onlyTerminating(); err != nil {
			t.Errorf("the agent: %v", err)
		}
		if evs := w.events(actuate.ReasonPressureEviction); len(evs) != 0 {
			t.Errorf("the agent evicted %+v, explain said it would evict nothing", evs)
		}
		r.stop(t)
	})
}

var rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// runningPod is world.pod for a BestEffort pod with labels, marked Running and Ready (a
// PodDisruptionBudget counts it healthy; no kubelet does it here).
func (w *world) runningPod(name string, labels map[string]string, usage int64) *corev1.Pod {
	p := pod(name, "", "besteffort", "")
	p.Namespace, p.UID, p.Spec.NodeName, p.Labels = w.ns, "", w.node, labels
	p.Finalizers = []string{"pressure.test/hold"}
	p.Spec.Containers[0].Image = "pressure.local/pause:v1"
	p.Status = corev1.PodStatus{}
	ctx := context.Background()
	got, err := w.client.CoreV1().Pods(w.ns).Create(ctx, p, metav1.CreateOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	got.Status.Phase = corev1.PodRunning
	got.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
	if got, err = w.client.CoreV1().Pods(w.ns).UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	w.tree.setPod(string(got.UID), "besteffort", usage)
	return got
}

// pdb creates a PodDisruptionBudget (minAvailable 1) over the labelled pods and waits until the
// disruption controller counts them.
func (w *world) pdb(name string, labels map[string]string) {
	ctx := context.Background()
	pdb := &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Namespace: w.ns, Name: name},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: ptr.To(intstr.FromInt32(1)), Selector: &metav1.LabelSelector{MatchLabels: labels}}}
	if _, err := w.client.PolicyV1().PodDisruptionBudgets(w.ns).Create(ctx, pdb, metav1.CreateOptions{}); err != nil {
		w.t.Fatal(err)
	}
	eventually(w.t, 60*time.Second, "the PDB's status", func() error {
		got, err := w.client.PolicyV1().PodDisruptionBudgets(w.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if s := got.Status; s.ObservedGeneration < got.Generation || s.CurrentHealthy != 1 || s.DesiredHealthy != 1 {
			return fmt.Errorf("status %+v", s)
		}
		return nil
	})
}

// explain runs `kubectl pressure explain --local -o json` on the world's node (its cgroup and proc
// trees, its kubelet configuration, its pods and Node through the API) and returns pressure-agent's
// answer.
func (w *world) explain(kubeconfig, agentConfig string) *explain.Pressure {
	cfg := w.config(false)
	var out, errOut bytes.Buffer
	args := []string{"explain", "--local", "--node-name", w.node, "--kubeconfig", kubeconfig, "--kubelet-config", w.kcfg,
		"--cgroup-root", cfg.CgroupRoot, "--proc-root", cfg.ProcRoot, "--kubelet-root-dir", filepath.Join(w.tree.root, "none"),
		"--runtime-root", filepath.Join(w.tree.root, "none"), "--agent-config", agentConfig, "-o", "json"}
	if err := cli.Run(context.Background(), genericiooptions.IOStreams{Out: &out, ErrOut: &errOut}, args); err != nil {
		w.t.Fatalf("explain %v: %v\n%s", args, err, errOut.String())
	}
	var r explain.Report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		w.t.Fatalf("explain's JSON: %v\n%s", err, out.String())
	}
	if r.Pressure == nil {
		w.t.Fatalf("explain gave no pressure-agent answer:\n%s", out.String())
	}
	w.t.Logf("explain: victims %+v, notes %q", r.Pressure.Victims, r.Pressure.Notes)
	return r.Pressure
}

// writeLedger writes a ledger holding e, settled, as the node's annotation (what an earlier agent left).
func (w *world) writeLedger(e policy.HistoryEntry) { w.writeLedgerEntry(e, true) }

// writeLedgerEntry writes a ledger holding e (settled 10s after it when settled) as the node's
// annotation.
func (w *world) writeLedgerEntry(e policy.HistoryEntry, settled bool) {
	l := policy.NewHistory(policy.LoopConfig{})
	l.Record(e)
	if settled {
		l.Settle(e.UID, e.At.Add(10*time.Second))
	}
	var b bytes.Buffer
	if err := loopbreaker.WriteLedger(&b, l); err != nil {
		w.t.Fatal(err)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{loopbreaker.LedgerAnnotation: b.String()}}})
	if err != nil {
		w.t.Fatal(err)
	}
	if _, err := w.client.CoreV1().Nodes().Patch(context.Background(), w.node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		w.t.Fatal(err)
	}
}

// ledger reads the node's ledger annotation: an error when the node cannot be read or the annotation
// is not a ledger (absent: the agent has not written it yet).
func (w *world) ledger() (*policy.History, error) {
	n, err := w.client.CoreV1().Nodes().Get(context.Background(), w.node, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	a, ok := n.Annotations[loopbreaker.LedgerAnnotation]
	if !ok {
		return nil, fmt.Errorf("node %s has no %s annotation yet", w.node, loopbreaker.LedgerAnnotation)
	}
	return loopbreaker.ReadLedger(strings.NewReader(a), policy.LoopConfig{})
}

// ledgerEntry returns the ledger's entry of uid.
func (w *world) ledgerEntry(uid types.UID) (policy.HistoryEntry, bool, error) {
	l, err := w.ledger()
	if err != nil {
		return policy.HistoryEntry{}, false, err
	}
	for _, e := range l.Entries() {
		if e.UID == string(uid) {
			return e, true, nil
		}
	}
	return policy.HistoryEntry{}, false, nil
}
