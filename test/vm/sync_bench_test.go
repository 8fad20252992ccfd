package vm_test

import (
	"context"
	"flag"
	"fmt"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/vm"
)

// syncGuestMiB is the guest's RAM for the benchmark: above the fixture tree's 2 GiB of pods, since the
// node's memory.available is the guest's MemTotal (its real /proc) less the tree's usage; with the default
// 1.5 GiB the "pressure" case met memory.available too and asked for more than the hog.
const syncGuestMiB = 4096

var syncBenchtime = flag.String("v2sync.benchtime", "", "benchtime of TestAgentWakeUpSyncInTheGuestBench, e.g. 50x (empty skips it)")

// benchLine is a line of go test -bench output: the name and its ns/op.
var benchLine = regexp.MustCompile(`^(Benchmark\S+)\s+\d+\s+(\d+(?:\.\d+)?) ns/op`)

// TestAgentWakeUpSyncInTheGuestBench runs internal/agent's BenchmarkWakeUpSync (the agent's own work
// from a wake-up to its decision) natively on the host and in the cgroup v2 guest (TCG), the same static
// binary, alternating three times: the ratio is what the guest's emulation costs the agent,
// the scale for the guest's crossing → request figures (docs/benchmarks.md). It runs only with
// -v2sync.benchtime.
func TestAgentWakeUpSyncInTheGuestBench(t *testing.T) {
	if *syncBenchtime == "" {
		// Not an environment skip: an opt-in measurement (docs/benchmarks.md).
		t.Skip("the guest's wake-up sync benchmark runs only with -v2sync.benchtime N (see docs/benchmarks.md)")
	}
	g := guest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	b := builder(t)
	initBin, err := b.Init(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := b.Test(ctx, "./internal/agent")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"-test.run", "^$", "-test.bench", "BenchmarkWakeUpSync", "-test.benchtime", *syncBenchtime}
	native := map[string][]float64{}
	guestNs := map[string][]float64{}
	for round := range 3 {
		out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("native run: %v\n%s", err, out)
		}
		addBench(native, string(out))
		res, err := g.Run(ctx, initBin, []vm.Program{{Name: "agent_bench", Host: bin, Args: args}}, vm.Options{Dir: t.TempDir(), Nice: 15, MemoryMiB: syncGuestMiB})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].Exit != 0 {
			t.Fatalf("guest run: %+v", res)
		}
		addBench(guestNs, res[0].Output)
		t.Logf("round %d: native %v, guest %v", round+1, native, guestNs)
	}
	var rows strings.Builder
	rows.WriteString("| benchmark | native ms/op (median of 3) | guest ms/op (median of 3) | guest / native |\n|---|---|---|---|\n")
	for _, name := range []string{"BenchmarkWakeUpSync/calm", "BenchmarkWakeUpSync/pressure"} {
		n, g := median(native[name])/1e6, median(guestNs[name])/1e6
		if n == 0 || g == 0 {
			t.Fatalf("%s: no figure (native %v, guest %v)", name, native[name], guestNs[name])
		}
		fmt.Fprintf(&rows, "| %s | %.2f | %.2f | %.1f |\n", name, n, g, g/n)
	}
	t.Log("\n" + rows.String())
}

// addBench adds each benchmark line's ns/op to into, by name without the -GOMAXPROCS suffix.
func addBench(into map[string][]float64, out string) {
	for _, l := range strings.Split(out, "\n") {
		m := benchLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		name := m[1]
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i]
		}
		v, _ := strconv.ParseFloat(m[2], 64)
		into[name] = append(into[name], v)
	}
}
