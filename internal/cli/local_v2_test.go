//go:build linux

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

func TestMain(m *testing.M) {
	cgrouptest.RunHogIfRequested()
	os.Exit(m.Run())
}

// TestExplainLocalOnARealV2NodeMatchesTheKubeletFormula runs explain --local in the test/vm guest on a
// real cgroup v2 tree laid out as the kubelet's cgroupfs driver does (<root>/kubepods with a memory.max,
// a burstable pod holding a 64 MiB hog) and checks both memory signals against the kubelet's formulas
// computed here from the raw files: memory.available = MemTotal − (anon + file − inactive_file of the
// root's memory.stat: runc's emulation of the root's usage, which has no memory.current), and
// allocatableMemory.available = memory.max − (memory.current − inactive_file) of kubepods.
func TestExplainLocalOnARealV2NodeMatchesTheKubeletFormula(t *testing.T) {
	const mib = 1 << 20
	root := cgrouptest.V2Root(t)
	pods := filepath.Join(root, "kubepods") // where the detector looks for the cgroupfs driver
	if err := cgrouptest.MkdirV2(root, "kubepods/burstable/pod0a0b0c0d-1111-2222-3333-444455556666", 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cgrouptest.Remove(pods); err != nil {
			t.Errorf("remove %s: %v", pods, err)
		}
	})
	if err := cgrouptest.WriteFile(filepath.Join(pods, "memory.max"), strconv.Itoa(512*mib)); err != nil {
		t.Fatal(err)
	}
	hog, err := cgrouptest.StartHog(filepath.Join(pods, "burstable", "pod0a0b0c0d-1111-2222-3333-444455556666"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hog.Close() })
	if err := hog.Alloc(64 * mib); err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "explain", "--local", "-o", "json", "--node-name", "guest", "--cgroup-root", root)
	if err != nil {
		t.Fatalf("explain --local: %v", err)
	}
	wantNode := readMemTotal(t) - (rawStat(t, root, "anon") + rawStat(t, root, "file") - rawStat(t, root, "inactive_file"))
	current, err := cgrouptest.ReadUint(filepath.Join(pods, "memory.current"))
	if err != nil {
		t.Fatal(err)
	}
	wantAlloc := 512*mib - (int64(current) - rawStat(t, pods, "inactive_file"))
	got := signalsAvailable(t, out)
	// The raw files are read after explain: the test process and the guest move by a few MiB meanwhile.
	for sig, want := range map[string]int64{"memory.available": wantNode, "allocatableMemory.available": wantAlloc} {
		g, ok := got[sig]
		if !ok {
			t.Errorf("%s not observed by explain --local on the v2 guest:\n%s", sig, out)
			continue
		}
		if d := g - want; d < -8*mib || d > 8*mib {
			t.Errorf("%s = %d MiB, want %d MiB ± 8 (the kubelet's formula on the raw files)", sig, g/mib, want/mib)
		}
		t.Logf("%s: explain %d MiB, kubelet formula on the raw files %d MiB", sig, g/mib, want/mib)
	}
}

// rawStat reads one key of dir/memory.stat without internal/source.
func rawStat(t *testing.T, dir, key string) int64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "memory.stat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) == 2 && f[0] == key {
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
	}
	t.Fatalf("%s/memory.stat has no %s", dir, key)
	return 0
}

// signalsAvailable returns the observed signals' available amounts from explain's JSON.
func signalsAvailable(t *testing.T, out string) map[string]int64 {
	t.Helper()
	var r struct {
		Signals []struct {
			Signal, Available string
			Observed          bool
		} `json:"signals"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	got := map[string]int64{}
	for _, s := range r.Signals {
		if v, err := strconv.ParseInt(s.Available, 10, 64); s.Observed && err == nil {
			got[s.Signal] = v
		}
	}
	return got
}
