// Command janitor benchmarks pressure-janitor against a plain delete client (the API server's
// ceiling) and the pod GC rule of kube-controller-manager (--terminated-pod-gc-threshold) on a real
// local control plane (test/cluster). See docs/benchmarks.md, section "Janitor", for the command and
// the results.
//
// Each phase creates -pods evicted pods (bound to a fake Node, status Failed/Evicted with a
// DisruptionTarget condition, as the kubelet writes them) spread over -namespaces and
// -replicasets, with -clients concurrent clients. The janitor contender measures:
//   - memory: heap and RSS of a janitor caching the first backlog (ttl 1h): 5 s after its cache
//     synced, then after a forced GC (the live heap), the peak heap from its GC trace, and its
//     heap profile; with -memory-bins, other janitor binaries on the same pods (a baseline);
//   - backlog, -rounds times interleaved: a fresh janitor process on a fresh backlog, then the
//     plain delete client on another; deletions per second of each, their medians and the
//     janitor/ceiling ratio;
//   - stream: a janitor (ttl 0) running while pods are evicted; p50/p90/p99 time from a pod's
//     eviction (status update acknowledged) to its deletion (seen by a watch), its CPU and peak RSS;
//   - with -leader-kill: two replicas with leader election on a backlog, the leader SIGKILLed
//     half-way; DELETE requests per pod (from the replicas' logs), their answers (from their
//     metrics), pods left and the takeover gap.
//
// The podgc contender measures the stream with the pod GC rule alone; memory only the memory phase;
// leaderkill only the leader kill.
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
	rounds                                 int
	leaderKill                             bool
	memoryBins, memoryLimits               string
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
	flag.StringVar(&o.contenders, "contenders", "janitor,podgc", "comma-separated: janitor, podgc, memory (only the memory measurement), leaderkill (only the leader kill)")
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved backlog rounds, janitor then plain delete client, each on a fresh backlog")
	flag.BoolVar(&o.leaderKill, "leader-kill", false, "after the stream, two janitor replicas with leader election on a backlog; SIGKILL the leader half-way")
	flag.StringVar(&o.memoryBins, "memory-bins", "", "memory contender: also measure these janitor binaries (name=path,...; built with --profiling) on the same pods, after the checkout's")
	flag.StringVar(&o.memoryLimits, "memory-limits", "", "memory contender: also measure each janitor with these GOMEMLIMIT values (comma-separated, e.g. 90MiB)")
	flag.BoolVar(&o.keepDir, "keep-dir", false, "keep each contender's directory (logs of the control plane and the janitor)")
	flag.Parse()
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintf(os.Stderr, "bench/janitor: %v\n", err)
		os.Exit(1)
	}
}
