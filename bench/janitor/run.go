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
	} else if name != "janitor" && name != "memory" {
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
	if name == "memory" {
		return benchMemory(ctx, o, w, cp, repo, dir)
	}
	return benchJanitor(ctx, o, w, watch, cp, repo, dir)
}

// benchMemory only creates the evicted pods and measures a janitor that caches them all.
func benchMemory(ctx context.Context, o options, w *workload, cp *cluster.ControlPlane, repo, dir string) error {
	bin, err := buildAndEvict(ctx, o, w, repo, dir, "m")
	if err != nil {
		return err
	}
	return measureMemory(ctx, o, bin, cp.Kubeconfig(), dir)
}

// buildAndEvict builds the janitor, then creates and evicts o.pods pods (named with prefix).
func buildAndEvict(ctx context.Context, o options, w *workload, repo, dir, prefix string) (string, error) {
	bin := filepath.Join(dir, "pressure-janitor")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/pressure-janitor")
	build.Dir, build.Stderr = repo, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("build janitor: %w", err)
	}
	start := time.Now()
	if _, err := w.evictAll(ctx, prefix); err != nil {
		return "", err
	}
	fmt.Printf("# created and evicted %d pods in %s (%.0f/s)\n", o.pods, time.Since(start).Round(time.Millisecond),
		float64(o.pods)/time.Since(start).Seconds())
	return bin, nil
}

func benchJanitor(ctx context.Context, o options, w *workload, watch *deleteWatch, cp *cluster.ControlPlane, repo, dir string) error {
	// Backlog: every pod evicted before the janitor starts.
	bin, err := buildAndEvict(ctx, o, w, repo, dir, "b")
	if err != nil {
		return err
	}

	// Memory: a janitor with a 1 h TTL caches every pod and deletes none.
	if err := measureMemory(ctx, o, bin, cp.Kubeconfig(), dir); err != nil {
		return err
	}

	j, err := startJanitorProcess(ctx, bin, cp.Kubeconfig(), dir, o, 0, "janitor")
	if err != nil {
		return err
	}
	defer j.stop()
	began := time.Now()
	if err := watch.waitRemaining(ctx, w, 0, o.timeout); err != nil {
		return err
	}
	took := time.Since(began)
	first, last := watch.span(began)
	janitorRate := float64(o.pods-1) / last.Sub(first).Seconds()
	fmt.Printf("janitor, backlog: cleaned %d pods in %s (from janitor start), %.0f deletions/s (first to last deletion)\n",
		o.pods, took.Round(time.Millisecond), janitorRate)
	cpuBacklog, _, err := j.usage()
	if err != nil {
		return err
	}

	r, err := streamPhase(ctx, w, watch, o, "s", 0)
	if err != nil {
		return err
	}
	r.print("janitor (ttl 0s), stream")
	cpu, rss, err := j.usage()
	if err != nil {
		return err
	}
	fmt.Printf("janitor process: %.1f s CPU for %d deletions (backlog %.2f ms per deletion), peak RSS %d MiB\n",
		cpu.Seconds(), 2*o.pods, float64(cpuBacklog.Microseconds())/1000/float64(o.pods), rss>>20)
	j.stop()

	// Ceiling: the same number of pods, deleted by a plain client with as many workers and no
	// rate limit, with the janitor stopped so it does not compete.
	if _, err := w.evictAll(ctx, "c"); err != nil {
		return err
	}
	ceiling, err := plainDelete(ctx, w.client, o.workers, watch, w)
	if err != nil {
		return err
	}
	fmt.Printf("plain delete client (%d workers, no rate limit), backlog: %.0f deletions/s; janitor backlog / ceiling = %.2f\n",
		o.workers, ceiling, janitorRate/ceiling)
	return nil
}

// measureMemory starts a janitor that keeps every pod (ttl 1h), waits for its cache to sync and
// reads its heap and RSS.
func measureMemory(ctx context.Context, o options, bin, kubeconfig, dir string) error {
	j, err := startJanitorProcess(ctx, bin, kubeconfig, dir, o, time.Hour, "janitor-memory")
	if err != nil {
		return err
	}
	defer j.stop()
	began := time.Now()
	if err := j.waitReady(ctx, o.timeout); err != nil {
		return err
	}
	synced := time.Since(began)
	time.Sleep(5 * time.Second) // let the first decisions settle
	heap, rss, err := j.memory()
	if err != nil {
		return err
	}
	_, peak, err := j.usage()
	if err != nil {
		return err
	}
	fmt.Printf("janitor memory with %d terminal pods cached (ttl 1h): synced in %s; heap in use %d MiB, RSS %d MiB, peak RSS %d MiB\n",
		o.pods, synced.Round(time.Millisecond), heap>>20, rss>>20, peak>>20)
	return nil
}
