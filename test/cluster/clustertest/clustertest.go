// Package clustertest gives tests a real control plane (package cluster) tied to the test's
// lifetime.
//
// Binaries: when the pinned binaries are not built, tests skip with the command that builds
// them, unless CI=true (or PRESSURE_BUILD=1), where hack/build-k8s.sh is run and a failure
// fails the test: CI never skips silently.
package clustertest

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/testenv"
	"github.com/kube-pressure/pressure/test/cluster"
)

// InCI reports whether CI=true: environment problems then fail tests instead of skipping them.
func InCI() bool { return testenv.InCI() }

// SkipOrFail skips the test with reason, or fails it under CI=true (testenv.SkipOrFail).
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	testenv.SkipOrFail(t, format, args...)
}

// Binaries finds the pinned Kubernetes binaries (see package doc for when it builds them).
func Binaries(t testing.TB) cluster.Binaries {
	t.Helper()
	repo := repoRoot(t)
	bins, err := cluster.FindBinaries(repo)
	if err == nil {
		return bins
	}
	if !errors.Is(err, cluster.ErrNotBuilt) {
		t.Fatalf("find kubernetes binaries: %v", err)
	}
	if !InCI() && os.Getenv("PRESSURE_BUILD") != "1" {
		t.Skipf("skipping: %v; build them with `hack/build-k8s.sh` (about 5 minutes cold) "+
			"or set PRESSURE_BUILD=1 to build from the test", err)
	}
	t.Logf("%v; running hack/build-k8s.sh", err)
	bins, err = cluster.BuildBinaries(repo, os.Stderr)
	if err != nil {
		t.Fatalf("build kubernetes binaries: %v", err)
	}
	return bins
}

// Option changes the ControlPlaneOptions that ControlPlane uses.
type Option func(*cluster.ControlPlaneOptions)

// WithTerminatedPodGCThreshold sets kube-controller-manager's --terminated-pod-gc-threshold.
func WithTerminatedPodGCThreshold(n int32) Option {
	return func(o *cluster.ControlPlaneOptions) { o.TerminatedPodGCThreshold = &n }
}

// WithOptions lets the caller edit the options directly.
func WithOptions(f func(*cluster.ControlPlaneOptions)) Option { return f }

// ControlPlane starts a control plane for t and stops it in t.Cleanup. The state directory
// (logs, kubeconfigs) is removed after a passing test and kept, with its path logged, after a
// failing one.
func ControlPlane(t testing.TB, opts ...Option) *cluster.ControlPlane {
	t.Helper()
	o := cluster.ControlPlaneOptions{Binaries: Binaries(t)}
	for _, opt := range opts {
		opt(&o)
	}
	if o.Dir == "" {
		dir, err := os.MkdirTemp("", "pressure-cluster-")
		if err != nil {
			t.Fatalf("%v", err)
		}
		o.Dir = dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	cp, err := cluster.StartControlPlane(ctx, o)
	if err != nil {
		t.Fatalf("start control plane (state in %s): %v", o.Dir, err)
	}
	t.Logf("control plane ready in %s: KUBECONFIG=%s", time.Since(start).Round(time.Millisecond), cp.Kubeconfig())
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("%v", err)
		}
		if t.Failed() {
			t.Logf("control plane state and logs kept in %s", cp.Dir())
			return
		}
		if cluster.HasMountsUnder(cp.Dir()) {
			t.Logf("kept %s: mounts remain under it (a node not stopped?); the next StartNode or hack/cluster.sh down cleans it up", cp.Dir())
			return
		}
		_ = os.RemoveAll(cp.Dir())
	})
	return cp
}

// NodeProblem says why this machine cannot run a level-2 node (root, the cgroup v1 memory
// controller), or "" when it can.
func NodeProblem() string {
	if os.Geteuid() != 0 {
		return "not root (containerd, the kubelet and cgroups need root)"
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.limit_in_bytes"); err != nil {
		return "no cgroup v1 memory controller at /sys/fs/cgroup/memory: " + err.Error()
	}
	return ""
}

// Node starts a level-2 node on cp for t and stops it in t.Cleanup (before the control plane's
// cleanup, which was registered earlier). It skips (fails under CI=true) when NodeProblem says
// the machine cannot run one. It waits up to 30 minutes for the machine-wide node lock.
func Node(t testing.TB, cp *cluster.ControlPlane, opts cluster.NodeOptions) *cluster.Node {
	t.Helper()
	if p := NodeProblem(); p != "" {
		SkipOrFail(t, "level-2 node unavailable: %s", p)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	start := time.Now()
	n, err := cluster.StartNode(ctx, cp, opts)
	if err != nil {
		t.Fatalf("start node (state in %s): %v", cp.Dir(), err)
	}
	t.Logf("node %s Ready after %s (kubelet config %s)", n.Name(), time.Since(start).Round(time.Millisecond), n.KubeletConfigPath())
	t.Cleanup(func() {
		if err := n.Stop(); err != nil {
			t.Errorf("%v", err)
		}
	})
	return n
}

// Containerd2 finds the containerd 2 build (hack/build-containerd.sh), building it under CI=true or
// PRESSURE_BUILD=1 (a few minutes the first time), and skips otherwise with how to build it.
func Containerd2(t testing.TB) *cluster.Containerd2 {
	t.Helper()
	repo := repoRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	c, err := cluster.FindContainerd2(ctx, repo)
	if err == nil {
		return &c
	}
	if !errors.Is(err, cluster.ErrNotBuilt) {
		t.Fatalf("find containerd 2: %v", err)
	}
	if !InCI() && os.Getenv("PRESSURE_BUILD") != "1" {
		t.Skipf("skipping: %v; build it with `hack/build-containerd.sh` (a few minutes cold) "+
			"or set PRESSURE_BUILD=1 to build from the test", err)
	}
	t.Logf("%v; running hack/build-containerd.sh", err)
	if c, err = cluster.BuildContainerd2(ctx, repo, os.Stderr); err != nil {
		t.Fatalf("build containerd 2: %v", err)
	}
	return &c
}

// repoRoot is the root of the repository the test runs in.
func repoRoot(t testing.TB) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatalf("getwd: %v", err)
	}
	repo, err := cluster.RepoRoot(wd)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return repo
}
