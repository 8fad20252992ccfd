package cgroupfs_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/parse"
	"github.com/kube-pressure/pressure/internal/testenv"
)

const (
	mib = 1 << 20
	// memTotal is MemTotal of procfs/testdata/proc-k6.18.44/meminfo (24684092 kB), captured with the v1 tree.
	memTotal = 24684092 * 1024
	uidG     = "11111111-2222-3333-4444-555555555555"
	uidB     = "66666666-7777-8888-9999-aaaaaaaaaaaa"
	uidE     = "bbbbbbbb-cccc-dddd-eeee-ffffffffffff"
)

var now = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

// noMagic makes detection rely on the files present, as it must for a fixture tree on a normal disk.
func noMagic(string) (int64, error) { return 0, errors.New("fixture: no statfs") }

func detect(t *testing.T, root string) cgroupfs.Layout {
	t.Helper()
	l, err := cgroupfs.Detector{Root: root, Magic: noMagic}.Detect()
	if err != nil {
		t.Fatalf("Detect(%s): %v", root, err)
	}
	return l
}

func TestDetect(t *testing.T) {
	td := "testdata"
	for _, tc := range []struct {
		name string
		root string
		want cgroupfs.Layout
	}{
		{"hybrid v1 host with hugetlb-only cgroup2 uses v1 memory and reports cgroup2 without memory",
			"cgroupv1-cgroupfs", cgroupfs.Layout{Version: cgroupfs.V1, Memory: td + "/cgroupv1-cgroupfs/memory",
				Unified: td + "/cgroupv1-cgroupfs/unified", Driver: cgroupfs.DriverCgroupfs, PodsCgroup: "kubepods"}},
		{"unified host with kubepods.slice is v2 with the systemd driver",
			"cgroupv2-systemd", cgroupfs.Layout{Version: cgroupfs.V2, Memory: td + "/cgroupv2-systemd",
				Unified: td + "/cgroupv2-systemd", UnifiedHasMemory: true, Driver: cgroupfs.DriverSystemd, PodsCgroup: "kubepods.slice"}},
		{"unified host with kubepods is v2 with the cgroupfs driver",
			"cgroupv2-cgroupfs", cgroupfs.Layout{Version: cgroupfs.V2, Memory: td + "/cgroupv2-cgroupfs",
				Unified: td + "/cgroupv2-cgroupfs", UnifiedHasMemory: true, Driver: cgroupfs.DriverCgroupfs, PodsCgroup: "kubepods"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := detect(t, filepath.Join(td, tc.root))
			if d := cmp.Diff(got, tc.want); d != "" {
				t.Errorf("Detect() (-got +want):\n%s", d)
			}
		})
	}
}

func TestDetectWithoutMemoryControllerFails(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte("hugetlb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := cgroupfs.Detector{Root: dir, Magic: func(string) (int64, error) { return cgroupfs.Cgroup2SuperMagic, nil }}.Detect()
	if !errors.Is(err, cgroupfs.ErrNoMemoryController) {
		t.Errorf("Detect() error = %v, want ErrNoMemoryController", err)
	}
}

func TestDetectRealHost(t *testing.T) {
	if _, err := os.Stat("/sys/fs/cgroup/memory/memory.usage_in_bytes"); err != nil {
		testenv.SkipOrFail(t, "no cgroup v1 memory controller on this host: %v", err)
	}
	l, err := cgroupfs.Detector{}.Detect()
	if err != nil {
		t.Fatalf("Detect(): %v", err)
	}
	if l.Version != cgroupfs.V1 || l.Memory != "/sys/fs/cgroup/memory" {
		t.Errorf("Detect() = %+v, want v1 at /sys/fs/cgroup/memory", l)
	}
	if l.Unified == "/sys/fs/cgroup/unified" && l.UnifiedHasMemory {
		t.Errorf("Detect() says cgroup2 has memory on this host; real-cluster-notes says only hugetlb: %+v", l)
	}
	t.Logf("real layout: %s", l)
}

type want struct {
	node     signal.Observation
	alloc    *signal.Observation
	allocErr error
	pods     map[string]signal.PodStats
	psi      []signal.Pressure
}

func obs(avail, capacity int64) signal.Observation {
	return signal.Observation{Available: avail, Capacity: capacity, Time: now, Source: signal.SourceCgroupfs}
}

func pod(uid string, ws, procs uint64) signal.PodStats {
	return signal.PodStats{UID: uid, Time: now, MemoryWorkingSet: &ws, ProcessCount: &procs}
}

func TestReaderOnFixtures(t *testing.T) {
	pressure := []signal.Pressure{{Scope: "", Resource: "memory",
		Some: signal.PressureLine{Avg10: 1.5, Avg60: 0.8, Avg300: 0.2, Total: 123456},
		Full: &signal.PressureLine{Avg10: 0.5, Avg60: 0.1, Total: 45678}, Time: now}}
	withScope := func(s string) []signal.Pressure { p := pressure[0]; p.Scope = s; return []signal.Pressure{p} }
	allocSystemd := obs(7168*mib-(768-256)*mib, 7168*mib)
	for _, tc := range []struct {
		name, root string
		want       want
	}{
		{"v1 captured host: working set is usage minus total_inactive_file and the 1GiB kubepods limit bounds allocatable",
			"cgroupv1-cgroupfs", want{
				node:  obs(memTotal-(5007966208-1516650496), memTotal),
				alloc: &signal.Observation{Available: 1073741824 - 80285696, Capacity: 1073741824, Time: now, Source: signal.SourceCgroupfs},
				pods: map[string]signal.PodStats{uidG: pod(uidG, 23982080, 1), uidB: pod(uidB, 56852480, 2),
					uidE: pod(uidE, 11354112, 1)},
			}},
		{"v2 systemd: root usage is anon+file, pod UIDs get their dashes back, inactive above usage floors at 0",
			"cgroupv2-systemd", want{
				node:  obs(memTotal-(3072-1536)*mib, memTotal),
				alloc: &allocSystemd,
				pods: map[string]signal.PodStats{uidG: pod(uidG, 150*mib, 2), uidB: pod(uidB, 200*mib, 3),
					uidE: pod(uidE, 0, 1)},
				psi: withScope("kubepods.slice"),
			}},
		{"v2 cgroupfs with memory.max \"max\" on kubepods has no allocatable observation",
			"cgroupv2-cgroupfs", want{
				node:     obs(memTotal-(3072-1536)*mib, memTotal),
				allocErr: cgroupfs.ErrUnlimited,
				pods: map[string]signal.PodStats{uidG: pod(uidG, 150*mib, 2), uidB: pod(uidB, 200*mib, 3),
					uidE: pod(uidE, 0, 1)},
				psi: withScope("kubepods"),
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &cgroupfs.Reader{Layout: detect(t, filepath.Join("testdata", tc.root))}
			checkReader(t, r, tc.want)
		})
	}
}

func checkReader(t *testing.T, r *cgroupfs.Reader, w want) {
	t.Helper()
	node, err := r.NodeMemory(now, memTotal)
	if err != nil {
		t.Errorf("NodeMemory: %v", err)
	} else if d := cmp.Diff(node, w.node); d != "" {
		t.Errorf("NodeMemory (-got +want):\n%s", d)
	}
	alloc, err := r.AllocatableMemory(now)
	switch {
	case w.allocErr != nil:
		if !errors.Is(err, w.allocErr) {
			t.Errorf("AllocatableMemory error = %v, want %v", err, w.allocErr)
		}
	case err != nil:
		t.Errorf("AllocatableMemory: %v", err)
	default:
		if d := cmp.Diff(alloc, *w.alloc); d != "" {
			t.Errorf("AllocatableMemory (-got +want):\n%s", d)
		}
	}
	pods, err := r.Pods(now)
	if err != nil {
		t.Errorf("Pods: %v", err)
	}
	// The reclaim fields (PodStats.Memory) are checked by TestReclaimFieldsOnFixtures.
	if d := cmp.Diff(pods, w.pods, cmpopts.IgnoreFields(signal.PodStats{}, "Memory")); d != "" {
		t.Errorf("Pods (-got +want):\n%s", d)
	}
	psi, err := r.Pressure(now)
	if err != nil {
		t.Errorf("Pressure: %v", err)
	}
	if d := cmp.Diff(psi, w.psi); d != "" {
		t.Errorf("Pressure (-got +want):\n%s", d)
	}
}

// copyFixture copies a fixture tree so a test can break it.
func copyFixture(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.CopyFS(dst, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestAbsentIsNotZero(t *testing.T) {
	for _, tc := range []struct {
		name, fixture, remove, rewrite, content string
		wantIs                                  error
	}{
		{name: "missing v1 usage file is an error naming the file", fixture: "cgroupv1-cgroupfs",
			remove: "memory/memory.usage_in_bytes", wantIs: fs.ErrNotExist},
		{name: "v1 memory.stat without total_inactive_file is a missing-field error", fixture: "cgroupv1-cgroupfs",
			rewrite: "memory/memory.stat", content: "cache 1\nrss 2\n", wantIs: parse.ErrMissing},
		{name: "v2 root memory.stat without anon is a missing-field error", fixture: "cgroupv2-systemd",
			rewrite: "memory.stat", content: "file 1\ninactive_file 1\n", wantIs: parse.ErrMissing},
		{name: "garbage in v1 usage is a parse error", fixture: "cgroupv1-cgroupfs",
			rewrite: "memory/memory.usage_in_bytes", content: "lots\n", wantIs: strconvErr},
		{name: "empty v1 usage file is an empty-file error", fixture: "cgroupv1-cgroupfs",
			rewrite: "memory/memory.usage_in_bytes", content: "", wantIs: parse.ErrEmpty},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := copyFixture(t, tc.fixture)
			r := &cgroupfs.Reader{Layout: detect(t, root)}
			if tc.remove != "" {
				if err := os.Remove(filepath.Join(root, tc.remove)); err != nil {
					t.Fatal(err)
				}
			}
			if tc.rewrite != "" {
				if err := os.WriteFile(filepath.Join(root, tc.rewrite), []byte(tc.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := r.NodeMemory(now, memTotal)
			if err == nil {
				t.Fatalf("NodeMemory() = %v, nil; want an error", got)
			}
			if !errors.Is(err, tc.wantIs) {
				t.Errorf("NodeMemory() error = %v, want errors.Is %v", err, tc.wantIs)
			}
			if got != (signal.Observation{}) {
				t.Errorf("NodeMemory() returned a value with an error: %v", got)
			}
			t.Logf("error text: %v", err)
		})
	}
}

func TestThreadsAreCountedFromTheThreadFilesAndAbsentWithoutThem(t *testing.T) {
	for _, tc := range []struct{ fixture, file string }{
		{"cgroupv1-cgroupfs", "tasks"},
		{"cgroupv2-systemd", "cgroup.threads"},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			root := copyFixture(t, tc.fixture)
			l := detect(t, root)
			cgs, err := l.PodCgroups()
			if err != nil {
				t.Fatal(err)
			}
			for _, cg := range cgs {
				if cg.UID != uidB {
					continue
				}
				// Two processes of 3 and 2 threads, one in a child cgroup (a container).
				dir := filepath.Join(l.Memory, cg.Rel)
				child := filepath.Join(dir, "ctr")
				if err := os.MkdirAll(child, 0o755); err != nil {
					t.Fatal(err)
				}
				for path, lines := range map[string]string{filepath.Join(dir, tc.file): "10\n11\n12\n", filepath.Join(child, tc.file): "20\n21\n"} {
					if err := os.WriteFile(path, []byte(lines), 0o644); err != nil {
						t.Fatal(err)
					}
				}
			}
			pods, err := (&cgroupfs.Reader{Layout: l}).Pods(now)
			if err != nil {
				t.Fatal(err)
			}
			if got := pods[uidB].ThreadCount; got == nil || *got != 5 {
				t.Errorf("ThreadCount of %s = %v, want 5", uidB, got)
			}
			if got := pods[uidG].ThreadCount; got != nil {
				t.Errorf("ThreadCount of %s without thread files = %d, want nil (not measured)", uidG, *got)
			}
		})
	}
}
