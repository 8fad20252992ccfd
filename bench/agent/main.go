// Command agent benchmarks pressure-agent as deployed on the level-2 test cluster (docs/benchmarks.md,
// "Agent"): the Helm chart deploy/helm/pressure is installed from images built from this checkout, then
// a stress pod ramps memory towards the pods cgroup limit while (A) the chart's agent pod or (C) the
// kubelet alone watches, interleaved by round (A at every rate, then C at every rate, then again) on one
// node so they share the machine's noise. It then measures the agent pod's CPU and RSS with N sleeping
// pods on the node. Run it as root (bench/agent/run.sh).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
)

type options struct {
	runs       int
	rates      []string
	contenders []contender
	steadyPods int
	steadyFor  time.Duration
	// steadyRounds interleaves the agent contenders' steady measurements: A, A0, A, A0, ...
	steadyRounds int
	out          string
	// profileDir receives the Dp contender's CPU profiles (agent-Dp-<round>.pprof).
	profileDir string
}

func main() {
	var o options
	var rates, contenders string
	flag.IntVar(&o.runs, "runs", 10, "runs per contender and rate")
	flag.StringVar(&rates, "rates", "64Mi,256Mi,1024Mi", "nominal ramp rates (bytes per second, quantities)")
	flag.StringVar(&contenders, "contenders", "D,C", "D: the agent installed by the chart with its default values; D0: the same with agent.config.evictionLead=0s; P100: the same with agent.config.notifiers.pollInterval=100ms; "+
		"Dp: D with --profiling, its steady CPU profile saved in -profile-dir (steady state only); "+
		"A: the memcg notifier contender (root, non-recursive read-only mounts); A0: A reading every pod's stats on every sync (steady state only); "+
		"C: kubelet alone (agent pod off the node)")
	flag.IntVar(&o.steadyPods, "steady-pods", 50, "sleeping pods for the CPU/RSS measurement (0: skip it)")
	flag.DurationVar(&o.steadyFor, "steady-for", 60*time.Second, "CPU/RSS measurement window")
	flag.IntVar(&o.steadyRounds, "steady-rounds", 1, "steady-state rounds, each measuring every agent contender once, interleaved")
	flag.StringVar(&o.profileDir, "profile-dir", os.TempDir(), "where contender Dp's CPU profiles go (go tool pprof -top FILE)")
	flag.StringVar(&o.out, "out", "bench/agent/last-run.md", "also write the report here (\"\": stdout only)")
	flag.Parse()
	o.rates = strings.Split(rates, ",")
	for _, r := range o.rates {
		if _, err := resource.ParseQuantity(r); err != nil {
			fatal(fmt.Errorf("-rates: %q: %w", r, err))
		}
	}
	for _, c := range strings.Split(contenders, ",") {
		ct, ok := contenderByName(c)
		if !ok {
			fatal(fmt.Errorf("-contenders: unknown %q (D, D0, P100, Dp, A, A0 or C)", c))
		}
		o.contenders = append(o.contenders, ct)
	}
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-sigs
		logf("%v: stopping (the cluster is torn down on the way out)", s)
		cancel()
	}()
	err := run(ctx, o)
	cancel()
	if err != nil {
		fatal(err)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s bench/agent: %s\n", time.Now().UTC().Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

func fatal(err error) {
	fmt.Fprintf(os.Stderr, "bench/agent: %v\n", err)
	os.Exit(1)
}
