package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/golden"
)

// localRecording writes a recording of three snapshots 10 s apart, each the healthy snapshot (its
// Summary never changes: cAdvisor's cache is stale), with the agent's own reads every 100ms in
// cgroups.json: the pending pod "fresh" ramps at 1Gi/s from +5s to 4.75Gi, between two snapshots.
func localRecording(t *testing.T) string {
	t.Helper()
	const gi, mi = 1 << 30, 1 << 20
	src := filepath.Join("testdata", "snapshots", "healthy")
	dir := t.TempDir()
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	fresh := func(d time.Duration) uint64 {
		if d < 5*time.Second {
			return 0
		}
		return min(uint64(4.75*gi), uint64(float64(gi)*(d-5*time.Second).Seconds()))
	}
	var reads []CgroupSample
	at := time.Duration(0)
	for i := 0; i < 3; i++ {
		snap, err := LoadSnapshotDir(os.DirFS(src), src)
		if err != nil {
			t.Fatal(err)
		}
		for ; at <= time.Duration(i)*10*time.Second; at += 100 * time.Millisecond {
			f := fresh(at)
			reads = append(reads, CgroupSample{Time: start.Add(at),
				MemoryAvailable:            &SignalValue{Available: 8*gi - 3*gi - int64(f), Capacity: 8 * gi},
				AllocatableMemoryAvailable: &SignalValue{Available: 6257901568 - int64(f), Capacity: 7516192768},
				PodsCgroup:                 &CgroupMemory{Usage: 1258291200 + f, WorkingSet: 1258291200 + f},
				Pods: map[string]CgroupMemory{"uid-etcd": {Usage: 300 * mi, WorkingSet: 300 * mi},
					"uid-web": {Usage: 700 * mi, WorkingSet: 700 * mi}, "uid-fresh": {Usage: f, WorkingSet: f}}})
		}
		if err := snap.SetCgroups(CgroupSamples{Layout: "fixture", Every: "100ms", Samples: reads}); err != nil {
			t.Fatal(err)
		}
		reads = nil
		if err := snap.WriteDir(filepath.Join(dir, start.Add(time.Duration(i)*10*time.Second).Format(StampLayout))); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestSimulateARecordingWithLocalSamplesRunsTheAgentOnThem(t *testing.T) {
	dir := localRecording(t)
	rec, err := LoadRecording(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Recording.Local); n != 201 {
		t.Errorf("%d local samples loaded, want 201 (every 100ms for 20s)", n)
	}
	text, err := runCLI(t, "simulate", dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"the agent's view: 201 local cgroup samples, every 100ms", "pressure-agent  evict     #1 default/fresh"} {
		if !strings.Contains(text, want) {
			t.Errorf("simulate output lacks %q", want)
		}
	}
	golden.Check(t, filepath.Join("testdata", "simulate", "golden", "recording-local.txt"), strings.ReplaceAll(text, dir, "DIR"))
}
