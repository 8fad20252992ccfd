package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/kube-pressure/pressure/test/cluster"
)

func run(ctx context.Context, o options) error {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	repo, err := cluster.RepoRoot(wd)
	if err != nil {
		return err
	}
	bins, err := cluster.FindBinaries(repo)
	if err != nil {
		return fmt.Errorf("%w (build them with hack/build-k8s.sh)", err)
	}
	fmt.Printf("# bench/janitor: %d pods, %d namespaces, %d ReplicaSets, %d clients, %d CPUs, %s\n",
		o.pods, o.namespaces, o.replicasets, o.clients, runtime.NumCPU(), runtime.Version())
	for _, name := range strings.Split(o.contenders, ",") {
		if err := benchContender(ctx, o, bins, repo, strings.TrimSpace(name)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func benchContender(ctx context.Context, o options, bins cluster.Binaries, repo, name string) error {
	threshold := int32(0) // pod GC's terminated-pod rule off while the janitor is measured
	if name == "podgc" {
		threshold = int32(o.gcThreshold)
	} else if name != "janitor" && name != "memory" && name != "leaderkill" {
		return fmt.Errorf("unknown contender %q", name)
	}
	dir, err := os.MkdirTemp("", "bench-janitor-")
	if err != nil {
		return err
	}
	if o.keepDir {
		fmt.Printf("# %s: directory %s kept\n", name, dir)
	} else {
		defer os.RemoveAll(dir)
	}
	// The ReplicaSet controller would delete the fixture pods (ReplicaSets scaled to zero) before
	// they are evicted; the garbage collector and the pod GC keep running.
	cp, err := cluster.StartControlPlane(ctx, cluster.ControlPlaneOptions{Binaries: bins, Dir: dir, TerminatedPodGCThreshold: &threshold,
		ExtraControllerManagerArgs: []string{"--controllers=*,-replicaset-controller,-deployment-controller"}})
	if err != nil {
		return err
	}
	defer cp.Stop()
	rc := cp.RESTConfig()
	rc.QPS, rc.Burst = 5000, 5000
	client, err := kubernetes.NewForConfig(rc)
	if err != nil {
		return err
	}
	w, err := newWorkload(ctx, client, o)
	if err != nil {
		return err
	}
	watch, err := startDeleteWatch(ctx, client)
	if err != nil {
		return err
	}
	if name == "podgc" {
		r, err := streamPhase(ctx, w, watch, o, "s", o.gcThreshold)
		if err != nil {
			return err
		}
		r.print(fmt.Sprintf("pod GC (threshold %d), stream", o.gcThreshold))
		return nil
	}
	switch name {
	case "memory":
		return benchMemory(ctx, o, w, cp, repo, dir)
	case "leaderkill":
		bin, err := buildJanitor(ctx, repo, dir)
		if err != nil {
			return err
		}
		return leaderKill(ctx, o, w, watch, cp, bin, dir)
	}
	return benchJanitor(ctx, o, w, watch, cp, repo, dir)
}

// benchMemory only creates the evicted pods and measures a janitor that caches them all: the one
// built from the checkout, then each of -memory-bins on the same pods.
func benchMemory(ctx context.Context, o options, w *workload, cp *cluster.ControlPlane, repo, dir string) error {
	bin, err := buildAndEvict(ctx, o, w, repo, dir, "m")
	if err != nil {
		return err
	}
	if err := measureMemory(ctx, o, "checkout", bin, cp.Kubeconfig(), dir); err != nil {
		return err
	}
	for _, nb := range strings.Split(o.memoryBins, ",") {
		name, path, ok := strings.Cut(strings.TrimSpace(nb), "=")
		if !ok {
			continue
		}
		if err := measureMemory(ctx, o, name, path, cp.Kubeconfig(), dir); err != nil {
			fmt.Printf("janitor %s memory: %v\n", name, err) // the others still count
		}
	}
	return nil
}

func buildJanitor(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "pressure-janitor")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/pressure-janitor")
	build.Dir, build.Stderr = repo, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build janitor: %w", err)
	}
	return bin, nil
}

// buildAndEvict builds the janitor, then creates and evicts o.pods pods (named with prefix).
func buildAndEvict(ctx context.Context, o options, w *workload, repo, dir, prefix string) (string, error) {
	bin, err := buildJanitor(ctx, repo, dir)
	if err != nil {
		return "", err
	}
	start := time.Now()
	if _, err := w.evictAll(ctx, prefix); err != nil {
		return "", err
	}
	fmt.Printf("# created and evicted %d pods in %s (%.0f/s)\n", o.pods, time.Since(start).Round(time.Millisecond),
		float64(o.pods)/time.Since(start).Seconds())
	return bin, nil
}
