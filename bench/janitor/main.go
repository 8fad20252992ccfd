// Command janitor benchmarks pressure-janitor against the pod GC rule of kube-controller-manager
// (--terminated-pod-gc-threshold) on a real local control plane (test/cluster). See
// docs/benchmarks.md, section "Janitor", for the command and the results.
//
// For each contender it creates -pods evicted pods (bound to a fake Node, status Failed/Evicted
// with a DisruptionTarget condition, as the kubelet writes them) spread over -namespaces and
// -replicasets, with -clients concurrent clients, and measures:
//   - backlog: all pods evicted first, then the cleaner started; time until -pods minus what the
//     rule keeps are gone, and deletions per second;
//   - stream: the cleaner running while pods are evicted; p50/p99 time from a pod's eviction
//     (status update acknowledged) to its deletion (seen by a watch);
//   - the janitor process's CPU time and peak RSS (it runs as a separate process).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"
)

type options struct {
	pods, namespaces, replicasets, clients int
	gcThreshold                            int
	rate                                   float64
	burst, workers                         int
	timeout                                time.Duration
	contenders                             string
	keepDir                                bool
}

func main() {
	var o options
	flag.IntVar(&o.pods, "pods", 10000, "evicted pods per phase")
	flag.IntVar(&o.namespaces, "namespaces", 100, "namespaces")
	flag.IntVar(&o.replicasets, "replicasets", 1000, "ReplicaSets (spread over the namespaces)")
	flag.IntVar(&o.clients, "clients", 16, "concurrent clients creating and evicting pods")
	flag.IntVar(&o.gcThreshold, "gc-threshold", 100, "kube-controller-manager --terminated-pod-gc-threshold of the baseline")
	flag.Float64Var(&o.rate, "rate", 500, "janitor rateLimit.deletionsPerSecond")
	flag.IntVar(&o.burst, "burst", 500, "janitor rateLimit.burst")
	flag.IntVar(&o.workers, "workers", 8, "janitor workers")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up a phase after this long")
	flag.StringVar(&o.contenders, "contenders", "janitor,podgc", "comma-separated: janitor, podgc, memory (only the memory measurement)")
	flag.BoolVar(&o.keepDir, "keep-dir", false, "keep each contender's directory (logs of the control plane and the janitor)")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintf(os.Stderr, "bench/janitor: %v\n", err)
		os.Exit(1)
	}
}
