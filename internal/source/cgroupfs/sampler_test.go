package cgroupfs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// sampleBoth reads both signals with the Reader and with s and reports where they differ.
func sampleBoth(t *testing.T, step string, r *cgroupfs.Reader, s *cgroupfs.Sampler) {
	t.Helper()
	wantN, wantNErr := r.NodeMemory(now, memTotal)
	gotN, gotNErr := s.NodeMemory(now, memTotal)
	if gotN != wantN || fmt.Sprint(gotNErr) != fmt.Sprint(wantNErr) {
		t.Errorf("%s: Sampler.NodeMemory() = %v, %v; Reader's %v, %v", step, gotN, gotNErr, wantN, wantNErr)
	}
	wantA, wantAErr := r.AllocatableMemory(now)
	gotA, gotAErr := s.AllocatableMemory(now)
	if gotA != wantA || fmt.Sprint(gotAErr) != fmt.Sprint(wantAErr) {
		t.Errorf("%s: Sampler.AllocatableMemory() = %v, %v; Reader's %v, %v", step, gotA, gotAErr, wantA, wantAErr)
	}
}

func TestSamplerGivesTheReadersSignalsAsTheFilesChange(t *testing.T) {
	// Each edit is applied to the copied tree in turn, a file replaced by a rename as the agent's tests
	// do; after each, the sampler must give what a fresh Reader read gives, value and error. (On a
	// fixture tree the sampler opens each file for each read; TestRealV1SamplerSeesChangesThroughItsOpenFiles
	// checks the files it keeps open on a cgroup filesystem.)
	type edit struct {
		name, file, content string
		remove              bool
	}
	for _, tc := range []struct {
		fixture string
		edits   []edit
	}{
		{"cgroupv1-cgroupfs", []edit{
			{name: "node usage grows", file: "memory/memory.usage_in_bytes", content: "9999999999\n"},
			{name: "pods limit lowered", file: "memory/kubepods/memory.limit_in_bytes", content: "1073741824\n"},
			{name: "pods limit unlimited", file: "memory/kubepods/memory.limit_in_bytes", content: "9223372036854771712\n"},
			{name: "pods limit back", file: "memory/kubepods/memory.limit_in_bytes", content: "2147483648\n"},
			{name: "node memory.stat rewritten", file: "memory/memory.stat", content: "cache 1\ntotal_inactive_file 4096\n"},
			{name: "node memory.stat without total_inactive_file", file: "memory/memory.stat", content: "cache 1\n"},
			{name: "node memory.stat with a bad picked line", file: "memory/memory.stat", content: "total_inactive_file x\n"},
			{name: "node memory.stat back", file: "memory/memory.stat", content: "total_inactive_file 8192\n"},
			{name: "pods usage removed", file: "memory/kubepods/memory.usage_in_bytes", remove: true},
			{name: "pods usage back", file: "memory/kubepods/memory.usage_in_bytes", content: "104857600\n"},
			{name: "pods usage garbage", file: "memory/kubepods/memory.usage_in_bytes", content: "lots\n"},
			{name: "pods usage empty", file: "memory/kubepods/memory.usage_in_bytes", content: ""},
		}},
		{"cgroupv2-systemd", []edit{
			{name: "root anon grows", file: "memory.stat", content: "anon 500000000\nfile 100\ninactive_file 50\n"},
			{name: "root memory.stat without anon", file: "memory.stat", content: "file 1\ninactive_file 1\n"},
			{name: "pods memory.max is max", file: "kubepods.slice/memory.max", content: "max\n"},
			{name: "pods memory.max a number", file: "kubepods.slice/memory.max", content: "3221225472\n"},
			{name: "pods memory.current grows", file: "kubepods.slice/memory.current", content: "2000000000\n"},
			{name: "pods memory.stat removed", file: "kubepods.slice/memory.stat", remove: true},
			{name: "pods memory.stat back", file: "kubepods.slice/memory.stat", content: "anon 1\ninactive_file 1000\n"},
		}},
		{"cgroupv2-cgroupfs", []edit{
			{name: "pods memory.current grows", file: "kubepods/memory.current", content: "2000000000\n"},
		}},
	} {
		t.Run(tc.fixture, func(t *testing.T) {
			root := copyFixture(t, tc.fixture)
			r := &cgroupfs.Reader{Layout: detect(t, root)}
			s := r.NewSampler()
			defer func() { _ = s.Close() }()
			sampleBoth(t, "the captured tree", r, s)
			for _, e := range tc.edits {
				p := filepath.Join(root, e.file)
				var err error
				if e.remove {
					err = os.Remove(p)
				} else {
					err = writeReplacing(p, e.content)
				}
				if err != nil {
					t.Fatal(err)
				}
				sampleBoth(t, e.name, r, s)
			}
		})
	}
}

// TestRealV1SamplerSeesChangesThroughItsOpenFiles checks on the host's cgroup v1 controller that a
// cgroup file kept open and read again at offset 0 gives the kernel's new value, and that a pods cgroup
// removed and created again is read anew, and that a sample through the open files does not allocate.
func TestRealV1SamplerSeesChangesThroughItsOpenFiles(t *testing.T) {
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(t, "real cgroup v1 test cannot run: %s", why)
	}
	top := cgrouptest.RandomName("pressure-test-sampler")
	pods := filepath.Join(cgrouptest.V1Memory, top, "kubepods")
	t.Cleanup(func() {
		if err := cgrouptest.Remove(filepath.Join(cgrouptest.V1Memory, top)); err != nil {
			t.Errorf("remove %s: %v", top, err)
		}
	})
	if err := cgrouptest.Mkdir(pods, 512*mib); err != nil {
		t.Fatal(err)
	}
	r := &cgroupfs.Reader{Layout: cgroupfs.Layout{Version: cgroupfs.V1, Memory: cgrouptest.V1Memory,
		Driver: cgroupfs.DriverCgroupfs, PodsCgroup: filepath.Join(top, "kubepods")}}
	s := r.NewSampler()
	t.Cleanup(func() { _ = s.Close() })
	capacity := func(step string, want int64) {
		t.Helper()
		o, err := s.AllocatableMemory(now)
		if err != nil || o.Capacity != want {
			t.Errorf("%s: AllocatableMemory() = %v, %v; want capacity %d", step, o, err, want)
		}
		if _, err := s.NodeMemory(now, memTotal); err != nil {
			t.Errorf("%s: NodeMemory(): %v", step, err)
		}
	}
	capacity("created with 512Mi", 512*mib)
	if n := testing.AllocsPerRun(100, func() {
		_, _ = s.NodeMemory(now, memTotal)
		_, _ = s.AllocatableMemory(now)
	}); n != 0 {
		t.Errorf("a sample through the open files allocates %.0f times, want 0", n)
	}
	if err := cgrouptest.WriteFile(filepath.Join(pods, "memory.limit_in_bytes"), fmt.Sprint(256*mib)); err != nil {
		t.Fatal(err)
	}
	capacity("limit lowered to 256Mi", 256*mib)
	before, err := s.AllocatableMemory(now)
	if err != nil {
		t.Fatal(err)
	}
	hog, err := cgrouptest.StartHog(pods)
	if err != nil {
		t.Fatal(err)
	}
	if err := hog.Alloc(64 * mib); err != nil {
		t.Fatal(err)
	}
	after, err := s.AllocatableMemory(now)
	if err != nil {
		t.Fatal(err)
	}
	if fell := before.Available - after.Available; fell < 60*mib {
		t.Errorf("64Mi touched in the pods cgroup: available fell by %d bytes through the open files, want at least 60Mi", fell)
	}
	if err := hog.Close(); err != nil {
		t.Logf("hog: %v", err)
	}
	if err := cgrouptest.Remove(pods); err != nil {
		t.Fatal(err)
	}
	if o, err := s.AllocatableMemory(now); err == nil {
		t.Errorf("removed pods cgroup: AllocatableMemory() = %v, want an error", o)
	}
	if err := cgrouptest.Mkdir(pods, 128*mib); err != nil {
		t.Fatal(err)
	}
	capacity("created again with 128Mi", 128*mib)
}

// writeReplacing writes content to a new file and renames it over path.
func writeReplacing(path, content string) error {
	if err := os.WriteFile(path+".tmp", []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}
