package vm_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/test/chartinstall"
	"github.com/kube-pressure/pressure/test/cluster/clustertest"
	"github.com/kube-pressure/pressure/test/vm"
)

var (
	cacheRuns      = flag.Int("v2cache.runs", 0, "runs per contender of TestCacheCaseOnCgroupV2Bench (0 skips it)")
	cacheBenchHold = flag.Duration("v2cache.hold", cacheHold, "how long the reader of TestCacheCaseOnCgroupV2Bench holds its "+
		"cache before the hog starts (issue 33's target: 10m)")
	cacheBenchLoop = flag.Bool("v2cache.loop", false, "TestCacheCaseOnCgroupV2Bench's reader reads its file back in a loop "+
		"(active file pages) instead of holding it")
)

// cacheContender is one contender of the cache case: no chart is the kubelet alone.
type cacheContender struct {
	name  string
	chart bool
	set   []string
}

// cacheContenders are docs/benchmarks.md's contenders of issue 33 (C, D, R0, R, Rk), on the same node:
// containerd 2 in the guest, which the rung needs, for all of them.
var cacheContenders = []cacheContender{
	{name: "C: kubelet alone"},
	{name: "D: chart defaults", chart: true},
	{name: "R0: reclaim-aware without the rung", chart: true, set: []string{"agent.config.policy=reclaim-aware"}},
	{name: "R: reclaim-aware + the rung", chart: true, set: rungValues()},
	{name: "Rk: R + the cgroup-kill rung", chart: true, set: killRungValues()},
}

// TestCacheCaseOnCgroupV2Bench runs the cache case (vm.Node.CacheCase: the reader 260Mi above the
// kubelet's threshold, held -v2cache.hold (30 s), read back in a loop with -v2cache.loop, then the hog)
// for each contender, interleaved, a fresh guest per run, and prints the table of docs/benchmarks.md. It
// runs only with -v2cache.runs N.
func TestCacheCaseOnCgroupV2Bench(t *testing.T) {
	if *cacheRuns <= 0 {
		// Not an environment skip: an opt-in measurement of many minutes (docs/benchmarks.md); the cache
		// case's tests run in every make test.
		t.Skip("the v2 cache case benchmark runs only with -v2cache.runs N (see docs/benchmarks.md)")
	}
	c := clustertest.Containerd2(t)
	var rows []string
	for i := range *cacheRuns {
		for _, k := range cacheContenders {
			t.Run(fmt.Sprintf("%s/run %d", k.name, i+1), func(t *testing.T) {
				r, agent := runCacheCase(t, cacheRun{containerd2: c, chart: k.chart, set: k.set, loop: *cacheBenchLoop,
					hold: *cacheBenchHold})
				rows = append(rows, cacheRow(k.name, r, chartinstall.ReclaimLines(strings.Join(agent, "\n"))))
			})
		}
	}
	reader := "held"
	if *cacheBenchLoop {
		reader = "read in a loop"
	}
	t.Logf("\n| contender | while the reader %s (%s) | with the hog | OOM kills | reader at the end | peak | reclaims |\n|---|---|---|---|---|---|---|\n%s", reader, *cacheBenchHold,
		strings.Join(rows, "\n"))
}

func cacheRow(name string, r vm.CacheResult, reclaims []string) string {
	held := "kept"
	if len(r.HoldEvicted) > 0 {
		held = "evicted " + strings.Join(r.HoldEvicted, ", ")
	}
	reader := "running"
	if !r.ReaderAlive {
		reader = "gone"
	}
	return fmt.Sprintf("| %s | %s | %s | %d | %s | %.0f MiB | %d %v |", name, held, strings.Join(r.Evicted, ", "), r.OOMKills,
		reader, r.PeakMiB, len(reclaims), reclaims)
}
