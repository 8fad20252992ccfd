package vm_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/test/vm"
)

// guestSuite is a package whose real cgroup v2 tests run in the guest: the -test.run pattern and the
// tests that must PASS there (a skip in the guest is a failure: the guest is the v2 host they wait for).
type guestSuite struct {
	pkg  string
	run  string
	want []string
}

var guestSuites = []guestSuite{
	{"./internal/source/cgroupfs", "^TestRealV2", []string{
		"TestRealV2PodWorkingSet", "TestRealV2MemoryEventsCountTheOOMKill"}},
	{"./internal/notify", "RealV2", []string{
		"TestPSITriggerWithASubSecondWindowFiresOnARealV2Cgroup",
		"TestFileWatchFiresWhenARealV2CgroupHitsMemoryHigh",
		"TestPollerFiresOnARealV2Cgroup"}},
	{"./internal/cgroupkill", "V2Hierarchy|V2Mount", []string{
		"TestCgroupKillEndsEveryProcessOfTheSubtreeOnTheRealV2Hierarchy",
		"TestKillerKillsThePodOnTheRealV2HierarchyAndSparesItsNeighbour",
		"TestKillerFallsBackToPidfdsOnAReadOnlyV2Mount",
		"TestKillerKillsAProcessTreeOnTheRealV2Hierarchy"}},
	{"./internal/cli", "^TestExplainLocalOnARealV2Node", []string{
		"TestExplainLocalOnARealV2NodeMatchesTheKubeletFormula"}},
	{"./internal/reclaim", "^TestReclaimRealV2", []string{
		"TestReclaimRealV2DropsPageCacheWhileTheProcessRuns",
		"TestReclaimRealV2AnonymousMemoryIsABoundedPartialResult"}},
}

// guestDiskMiB is the guest's scratch disk (vm.Options.DiskMiB): room for the reclaim suite's 200 MiB of
// page cache on a real filesystem.
const guestDiskMiB = 320

// TestGuestRunsTheRealCgroupV2Tests builds the packages' test binaries statically, boots one guest for
// all of them and checks that every listed test passed in it.
func TestGuestRunsTheRealCgroupV2Tests(t *testing.T) {
	g := guest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	b := builder(t)
	start := time.Now()
	initBin, err := b.Init(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var progs []vm.Program
	for _, s := range guestSuites {
		bin, err := b.Test(ctx, s.pkg)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, vm.Program{Name: strings.ReplaceAll(strings.TrimPrefix(s.pkg, "./internal/"), "/", "_"), Host: bin,
			Args: []string{"-test.v", "-test.count=1", "-test.timeout=3m", "-test.run", s.run}})
	}
	built := time.Now()
	res, err := g.Run(ctx, initBin, progs, vm.Options{Dir: t.TempDir(), Nice: 15, DiskMiB: guestDiskMiB})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build %s, guest %s (boot, %d test binaries, power-off)", built.Sub(start).Round(time.Second),
		time.Since(built).Round(100*time.Millisecond), len(progs))
	if len(res) != len(guestSuites) {
		t.Fatalf("guest ran %d programs, want %d", len(res), len(guestSuites))
	}
	for i, s := range guestSuites {
		checkSuite(t, s, res[i])
	}
}

func checkSuite(t *testing.T, s guestSuite, r vm.Result) {
	t.Helper()
	failed := r.Exit != 0
	for _, name := range s.want {
		if !strings.Contains(r.Output, "--- PASS: "+name+" ") {
			t.Errorf("%s: %s did not pass in the guest", s.pkg, name)
			failed = true
		}
	}
	if failed {
		t.Errorf("%s in the guest: exit %d after %s; output:\n%s", s.pkg, r.Exit, r.Elapsed, r.Output)
		return
	}
	t.Logf("%s: %d tests passed in the guest in %s", s.pkg, len(s.want), r.Elapsed)
	for _, l := range strings.Split(r.Output, "\n") {
		if strings.Contains(l, ".go:") { // the tests' own t.Log lines (numbers seen in the guest)
			t.Log("  guest " + strings.TrimSpace(l))
		}
	}
}
