package agent

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kube-pressure/pressure/internal/actuate"
	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/test/evictaudit"
)

// scenario puts the three pods of the scenario 1 on the node, without pressure yet
// (available 2048 - 1450 = 598Mi; the agent acts below 100Mi + 256Mi headroom = 356Mi).
func (w *world) scenario() (stress string) {
	p := w.pod("stress", "besteffort", "", 1000*mi)
	w.pod("burst", "burstable", "50Mi", 300*mi)
	w.pod("guar", "guaranteed", "200Mi", 150*mi)
	return string(p.UID)
}

func (w *world) waitReady(r *running) {
	eventually(w.t, 60*time.Second, "readyz", func() error {
		code, body, err := get("http://" + r.health + "/readyz")
		if err != nil || code != 200 {
			return fmt.Errorf("code %d body %q err %v", code, body, err)
		}
		return nil
	})
}

func (w *world) onlyTerminating(want ...string) error {
	got := w.terminating()
	for name, term := range got {
		wanted := false
		for _, n := range want {
			wanted = wanted || n == name
		}
		if term != wanted {
			return fmt.Errorf("terminating pods %v, want exactly %v", got, want)
		}
	}
	return nil
}

func testEvictsOnFakeNode(t *testing.T, rc *rest.Config, client kubernetes.Interface) {
	w := newWorld(t, client, "node-evict")
	stress := w.scenario()
	r := w.start(w.config(false), rc)
	w.waitReady(r)
	w.tree.setPod(stress, "besteffort", 1550*mi) // available 48Mi
	eventually(t, 20*time.Second, "stress pod evicted", func() error { return w.onlyTerminating("stress") })
	time.Sleep(2 * time.Second) // more syncs under the same pressure: nothing else goes
	if err := w.onlyTerminating("stress"); err != nil {
		t.Error(err)
	}
	evs := w.events(actuate.ReasonPressureEviction)
	if len(evs) != 1 || evs[0].InvolvedObject.Name != "stress" {
		t.Fatalf("PressureEviction events %+v, want one on stress", evs)
	}
	msg := evs[0].Message
	for _, want := range []string{"eviction-api", "allocatableMemory.available", "observed 48Mi", "threshold 356Mi", "rank 1"} {
		if !strings.Contains(msg, want) {
			t.Errorf("event message %q lacks %q", msg, want)
		}
	}
	if len(w.events(actuate.ReasonNodePressureStarted)) == 0 {
		t.Errorf("no NodePressureStarted event on the node")
	}
	eventually(t, 10*time.Second, "taint while under pressure", func() error {
		if !w.tainted() {
			return fmt.Errorf("node %s has no %s taint", w.node, loopbreaker.TaintKey)
		}
		return nil
	})
	// The kubelet finishes the pod: the finalizer goes, the cgroup goes, the pressure ends.
	w.release("stress", stress)
	eventually(t, 20*time.Second, "pressure ended and taint lifted after the cool-down", func() error {
		if len(w.events(actuate.ReasonNodePressureEnded)) == 0 {
			return fmt.Errorf("no NodePressureEnded event")
		}
		if w.tainted() {
			return fmt.Errorf("node still tainted")
		}
		return nil
	})
	if got := counter(r.reg, "pressure_agent_evictions_total", "path", "eviction-api", "outcome", "evicted"); got != 1 {
		t.Errorf("pressure_agent_evictions_total{path=eviction-api,outcome=evicted} is %v, want 1", got)
	}
}

// release removes the pod's finalizer (so the deletion completes) and its cgroup.
func (w *world) release(name, uid string) {
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := w.client.CoreV1().Pods(w.ns).Patch(context.Background(), name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		w.t.Fatal(err)
	}
	w.tree.removePod(uid)
}

func testDryRun(t *testing.T, rc *rest.Config, client kubernetes.Interface, auditLog string) {
	w := newWorld(t, client, "node-dry")
	stress := w.scenario()
	// Its own user agent, to find its requests in the audit log; the loop breaker and avoidance
	// ConfigMaps configured as the chart configures them.
	drc := rest.CopyConfig(rc)
	drc.UserAgent = "pressure-agent-dry-run-test"
	cfg := w.config(true)
	cfg.LoopBreaker, cfg.AvoidanceNamespace = true, w.ns
	r := w.start(cfg, drc)
	w.waitReady(r)
	w.tree.setPod(stress, "besteffort", 1550*mi)
	eventually(t, 20*time.Second, "would-evict event", func() error {
		evs := w.events(actuate.ReasonPressureEvictionDryRun)
		if len(evs) == 0 {
			return fmt.Errorf("no %s event", actuate.ReasonPressureEvictionDryRun)
		}
		if evs[0].InvolvedObject.Name != "stress" || !strings.Contains(evs[0].Message, "Would evict") {
			return fmt.Errorf("event %s on %s: %q", evs[0].Reason, evs[0].InvolvedObject.Name, evs[0].Message)
		}
		return nil
	})
	time.Sleep(3 * time.Second)
	if err := w.onlyTerminating(); err != nil {
		t.Error(err)
	}
	if w.tainted() {
		t.Errorf("dry-run tainted the node")
	}
	n, err := client.CoreV1().Nodes().Get(context.Background(), w.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := n.Annotations[loopbreaker.LedgerAnnotation]; ok {
		t.Errorf("dry-run wrote the ledger: %s", v)
	}
	if got := len(w.events(actuate.ReasonPressureEviction)); got != 0 {
		t.Errorf("%d PressureEviction events in dry-run", got)
	}
	// The API server's audit log: no write of a pod (eviction, delete, patch), a node (taint, ledger) or a
	// ConfigMap (avoidance), dry-run or not; its Events are not logged.
	ws, err := evictaudit.ReadWrites(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) == 0 {
		t.Fatalf("the audit log holds no write at all; the fixtures' writes should be there")
	}
	for _, wr := range evictaudit.By(ws, drc.UserAgent) {
		t.Errorf("dry-run agent wrote %s", wr)
	}
}

func testRestart(t *testing.T, rc *rest.Config, client kubernetes.Interface) {
	w := newWorld(t, client, "node-restart")
	stress := w.scenario()
	first := w.start(w.config(false), rc)
	w.waitReady(first)
	w.tree.setPod(stress, "besteffort", 1550*mi)
	eventually(t, 20*time.Second, "stress pod evicted by the first agent", func() error { return w.onlyTerminating("stress") })
	// The eviction's Event is written in the background: stopping the first agent at once could drop it
	// (1 of 5 runs under load, 2026-12-05), and the count below is about the second agent.
	eventually(t, 20*time.Second, "the first agent's PressureEviction event", func() error {
		if got := len(w.events(actuate.ReasonPressureEviction)); got != 1 {
			return fmt.Errorf("%d PressureEviction events", got)
		}
		return nil
	})
	first.stop(t)
	// The pressure is still there (the pod is still stopping); a new agent must not evict it again, nor
	// anything else: the stopping pod's memory counts as released.
	second := w.start(w.config(false), rc)
	w.waitReady(second)
	time.Sleep(5 * time.Second)
	if got := counter(second.reg, "pressure_agent_evictions_total"); got != 0 {
		t.Errorf("the restarted agent made %v eviction requests, want 0", got)
	}
	if err := w.onlyTerminating("stress"); err != nil {
		t.Error(err)
	}
	if got := len(w.events(actuate.ReasonPressureEviction)); got != 1 {
		t.Errorf("%d PressureEviction events, want 1", got)
	}
	n, err := client.CoreV1().Nodes().Get(context.Background(), w.node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(n.Annotations[loopbreaker.LedgerAnnotation], stress) {
		t.Errorf("ledger annotation %q does not hold the eviction of %s", n.Annotations[loopbreaker.LedgerAnnotation], stress)
	}
}

func testAPIOutage(t *testing.T, rc *rest.Config, client kubernetes.Interface, stopAPI func() error, startAPI func(context.Context) error) {
	w := newWorld(t, client, "node-outage")
	stress := w.scenario()
	cfg := w.config(false)
	// The cgroup-kill rung would "kill" the fixture pod (no processes) while the API is down and the
	// ledger would then hold it in flight; this case is about the API path recovering.
	cfg.Ladder.AllowCgroupKill, cfg.Settings.KillLead = false, 0
	r := w.start(cfg, rc)
	w.waitReady(r)
	if err := stopAPI(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = startAPI(context.Background())
		}
	}()
	w.tree.setPod(stress, "besteffort", 1550*mi)
	start := time.Now()
	for time.Since(start) < 20*time.Second {
		code, body, err := get("http://" + r.health + "/healthz")
		if err != nil || code != 200 {
			t.Fatalf("healthz during the outage: %d %q %v", code, body, err)
		}
		time.Sleep(time.Second)
	}
	if got := gaugeValue(r.reg, "pressure_agent_signal_available_bytes", "signal", "allocatableMemory.available"); got != float64(48*mi) {
		t.Errorf("allocatableMemory.available gauge during the outage %v, want %d: the agent must keep observing", got, 48*mi)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := startAPI(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	eventually(t, 60*time.Second, "stress pod evicted after the API came back", func() error { return w.onlyTerminating("stress") })
	time.Sleep(3 * time.Second)
	if err := w.onlyTerminating("stress"); err != nil {
		t.Errorf("after recovery: %v (no pile-up of evictions)", err)
	}
	_, body, err := get("http://" + r.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("eviction requests by outcome: %s", grepMetric(body, "pressure_agent_evictions_total"))
	if got := counter(r.reg, "pressure_agent_evictions_total", "outcome", "evicted"); got != 1 {
		t.Errorf("%v evictions accepted, want 1", got)
	}
}

func grepMetric(body, name string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, name) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "; ")
}
