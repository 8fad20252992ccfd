package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/loopbreaker"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

// TestAgentStartedWhileTheAPIServerIsDownProtectsTheNode (level 1): the API server is stopped before
// the agent starts, with the cgroup-kill rung on. The loop runs at once: it observes the node and, with
// no pod list, kills the hog it finds in the cgroup tree under the hard threshold (a real process listed
// in the fixture pod's cgroup.procs), once; the Guaranteed pod and the other pod are left alone. When
// the API server is back, the pod list and the ledger come in and nothing more is done.
func TestAgentStartedWhileTheAPIServerIsDownProtectsTheNode(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	client, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, client, "node-apidown")
	stress := w.scenario()
	hog := exec.Command("sleep", "300")
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- hog.Wait() }()
	t.Cleanup(func() { _ = hog.Process.Kill() })
	if err := cp.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = cp.StartAPIServer(context.Background())
		}
	}()
	cfg := w.config(false)
	cfg.Ladder.AllowCgroupKill, cfg.Settings.KillLead = true, 0
	r := w.start(cfg, cp.RESTConfig())
	// The hog in the pod's cgroup.procs before its usage puts the node under the threshold: the other way
	// round the agent's 50 ms poll could kill the cgroup while it listed no process (seen in make test:
	// "killed an unlisted pod ... processes=0", then the hog left running, the kill already in flight).
	w.tree.setPIDs(stress, hog.Process.Pid)
	w.tree.setPod(stress, "besteffort", 1550*mi) // available 48Mi: below the agent's 356Mi
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Errorf("hog exited with %v, want SIGKILL", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("the hog was not killed within 20s with the API server down; log:\n%s", w.logs.String())
	}
	time.Sleep(3 * time.Second) // more syncs under the same reading: the kill is in flight, nothing else goes
	if got := counter(r.reg, "pressure_agent_evictions_total", "path", "cgroup-kill", "outcome", "killed"); got != 1 {
		t.Errorf("cgroup kills %v, want 1", got)
	}
	if n := strings.Count(w.logs.String(), "killed an unlisted pod"); n != 1 || !strings.Contains(w.logs.String(), "uid="+stress) {
		t.Errorf("%d kill lines, want 1 naming uid %s", n, stress)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := cp.StartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	restarted = true
	w.waitReady(r)
	time.Sleep(3 * time.Second)
	if got := counter(r.reg, "pressure_agent_evictions_total"); got != 1 {
		t.Errorf("eviction requests after the API came back %v, want the one kill only", got)
	}
	if err := w.onlyTerminating(); err != nil {
		t.Errorf("after the API came back: %v", err)
	}
}

// TestAgentRereadsTheKubeletConfig (level 1): the kubelet's file is read again every
// kubeletConfigRefresh. A raised memory threshold (100Mi to 400Mi: the agent's becomes 656Mi) makes the
// agent evict at 598Mi available, where it evicted nothing before, and the change is logged.
func TestAgentRereadsTheKubeletConfig(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	client, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t, client, "node-kubelet-refresh")
	w.scenario() // 598Mi available
	cfg := w.config(false)
	cfg.KubeletConfigRefresh = time.Second
	r := w.start(cfg, cp.RESTConfig())
	w.waitReady(r)
	time.Sleep(2 * time.Second)
	if err := w.onlyTerminating(); err != nil {
		t.Fatalf("before the change: %v", err)
	}
	kc := "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nevictionHard:\n  memory.available: 400Mi\n  allocatableMemory.available: 400Mi\n"
	writeAtomic(t, w.kcfg, kc)
	eventually(t, 20*time.Second, "stress pod evicted under the new threshold", func() error { return w.onlyTerminating("stress") })
	if n := strings.Count(w.logs.String(), "kubelet config changed"); n != 1 {
		t.Errorf("%d 'kubelet config changed' lines, want 1:\n%s", n, w.logs.String())
	}
	if !strings.Contains(w.logs.String(), "memory.available<400Mi") {
		t.Errorf("the change log does not show the new threshold")
	}
	if err := os.Remove(w.kcfg); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if n := strings.Count(w.logs.String(), "kubelet config unreadable"); n != 1 {
		t.Errorf("%d 'unreadable' warnings for a removed file over 3 refreshes, want 1", n)
	}
}

// TestAgentStartsOnAnUnreadableLedger (level 1): a Node whose ledger annotation is corrupt, or was
// written by a newer agent, no longer keeps the agent retrying forever: it starts, warns once naming the
// node, the annotation and the value, and evicts. A corrupt ledger is replaced by the agent's; a newer
// agent's is left as it is.
func TestAgentStartsOnAnUnreadableLedger(t *testing.T) {
	cp := clustertest.ControlPlane(t)
	client, err := cp.Client()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		node, stored string
		kept         bool
	}{
		{"node-ledger-corrupt", `{"version":2,"entries":[{"uid":`, false},
		{"node-ledger-newer", `{"version":3,"entries":[],"budgets":[{"owner":"x"}]}`, true},
	} {
		t.Run(tc.node, func(t *testing.T) {
			ctx := context.Background()
			w := newWorld(t, client, tc.node)
			patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{loopbreaker.LedgerAnnotation: tc.stored}}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := client.CoreV1().Nodes().Patch(ctx, tc.node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
			stress := w.scenario()
			r := w.start(w.config(false), cp.RESTConfig())
			done := make(chan struct{})
			go func() {
				w.waitReady(r)
				close(done)
			}()
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatalf("agent not ready within 30s on an unreadable ledger; log:\n%s", w.logs.String())
			}
			w.tree.setPod(stress, "besteffort", 1550*mi)
			eventually(t, 20*time.Second, "stress pod evicted", func() error { return w.onlyTerminating("stress") })
			var warnings []string
			for _, l := range strings.Split(w.logs.String(), "\n") {
				if strings.Contains(l, "ledger annotation unreadable") {
					warnings = append(warnings, l)
				}
			}
			if len(warnings) != 1 {
				t.Fatalf("%d ledger warnings, want 1:\n%s", len(warnings), strings.Join(warnings, "\n"))
			}
			for _, want := range []string{"node=" + tc.node, "annotation=" + loopbreaker.LedgerAnnotation, "value=", `"version\":`} {
				if !strings.Contains(warnings[0], want) {
					t.Errorf("warning %q lacks %q", warnings[0], want)
				}
			}
			if strings.Contains(w.logs.String(), "retrying") {
				t.Errorf("the agent retried: %s", w.logs.String())
			}
			eventually(t, 10*time.Second, "ledger annotation", func() error {
				n, err := client.CoreV1().Nodes().Get(ctx, tc.node, metav1.GetOptions{})
				if err != nil {
					return err
				}
				got := n.Annotations[loopbreaker.LedgerAnnotation]
				switch {
				case tc.kept && got != tc.stored:
					return fmt.Errorf("the newer agent's ledger was overwritten: %s", got)
				case !tc.kept && !strings.Contains(got, stress):
					return fmt.Errorf("annotation %s, want the agent's ledger with the eviction of %s", got, stress)
				}
				return nil
			})
		})
	}
}
