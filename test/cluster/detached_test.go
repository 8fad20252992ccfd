package cluster_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/cluster"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
)

func TestDetachedClusterIsRecordedReusedAndTakenDownByPID(t *testing.T) {
	bins := clustertest.Binaries(t)
	stateDir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, already, err := cluster.Up(ctx, cluster.DetachedOptions{StateDir: stateDir, Binaries: bins})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Down(stateDir) })
	if already {
		t.Error("first Up: already = true, want false")
	}
	// What a later `env` or `down` sees: only the state file, no *exec.Cmd.
	recorded, err := cluster.ReadState(cluster.StatePath(stateDir))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(recorded.Alive()), 4; got != want {
		t.Fatalf("recorded processes alive: got %d, want %d (%+v)", got, want, recorded.Processes)
	}
	if recorded.Kubeconfig != s.Kubeconfig {
		t.Errorf("recorded kubeconfig %q, want %q", recorded.Kubeconfig, s.Kubeconfig)
	}
	if _, already, err := cluster.Up(ctx, cluster.DetachedOptions{StateDir: stateDir, Binaries: bins}); err != nil || !already {
		t.Errorf("second Up: already %v, err %v; want the running cluster reused", already, err)
	}
	if err := cluster.Down(stateDir); err != nil {
		t.Fatal(err)
	}
	for _, p := range recorded.Processes {
		if p.Alive() {
			t.Errorf("%s (pid %d) alive after Down", p.Name, p.PID)
		}
	}
	if _, err := os.Stat(cluster.StatePath(stateDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state file after Down: %v, want it removed", err)
	}
	if err := cluster.Down(stateDir); err != nil {
		t.Errorf("second Down (nothing recorded): %v, want nil", err)
	}
}
