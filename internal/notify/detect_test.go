package notify_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kube-pressure/pressure/internal/notify"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
)

func TestDetectOnThisHost(t *testing.T) {
	if why := cgrouptest.Available(); why != "" {
		t.Skipf("real detection needs the cgroup v1 memory controller: %s", why)
	}
	l, err := cgroupfs.Detector{}.Detect()
	if err != nil {
		t.Fatal(err)
	}
	ms := notify.Detect(notify.DetectOptions{Layout: l})
	desc := ms.String()
	t.Logf("mechanisms: %s", desc)
	for _, want := range []string{
		"memcg-threshold(/sys/fs/cgroup/memory) active",
		"psi-cgroup unavailable: no memory controller on cgroup2",
		"memory-events unavailable",
		"poll(100ms) active",
	} {
		if !strings.Contains(desc, want) {
			t.Errorf("Detect() = %q, want it to contain %q", desc, want)
		}
	}
}

func TestDetectOnV2FixtureProbesWithoutWritingToOrdinaryFiles(t *testing.T) {
	root := filepath.Join(t.TempDir(), "cgroupv2-systemd")
	if err := os.CopyFS(root, os.DirFS("../source/cgroupfs/testdata/cgroupv2-systemd")); err != nil {
		t.Fatal(err)
	}
	pressure := filepath.Join(root, "kubepods.slice", "memory.pressure")
	before, err := os.ReadFile(pressure)
	if err != nil {
		t.Fatal(err)
	}
	l := cgroupfs.Layout{Version: cgroupfs.V2, Memory: root, Unified: root, UnifiedHasMemory: true,
		Driver: cgroupfs.DriverSystemd, PodsCgroup: "kubepods.slice"}
	desc := notify.Detect(notify.DetectOptions{Layout: l}).String()
	t.Logf("mechanisms: %s", desc)
	for _, want := range []string{
		"memcg-threshold unavailable: cgroup v2 has no memory threshold notifications",
		"psi(" + pressure + ") unavailable: arm psi trigger on " + pressure,
		"not a kernel control file",
		"memory-events(" + filepath.Join(root, "kubepods.slice", "memory.events") + ") active",
		"poll(100ms) active",
	} {
		if !strings.Contains(desc, want) {
			t.Errorf("Detect() = %q, want it to contain %q", desc, want)
		}
	}
	after, err := os.ReadFile(pressure)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("Detect wrote to the ordinary file %s: %q became %q", pressure, before, after)
	}
}

func TestSignalNeverBlocks(t *testing.T) {
	if why := cgrouptest.Available(); why != "" {
		t.Skipf("needs a real memcg: %s", why)
	}
	dir, hog := realCgroup(t, 1<<30)
	base := usage(t, dir)
	_, ch := startMemcg(t, dir, base+8*mib)
	// Cross up and down three times without reading: the notifier must keep running and coalesce.
	for i := 0; i < 3; i++ {
		if err := hog.Alloc(16 * mib); err != nil {
			t.Fatal(err)
		}
		if err := hog.Free(); err != nil {
			t.Fatal(err)
		}
	}
	if !waitSignal(ch, 0) && !waitSignal(ch, 2e9) {
		t.Fatal("no pending signal after six crossings")
	}
	if err := hog.Alloc(16 * mib); err != nil {
		t.Fatal(err)
	}
	if !waitSignal(ch, 2e9) {
		t.Error("notifier stopped signalling after its channel was full")
	}
}
