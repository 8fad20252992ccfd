package reclaim

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// TestPodsFreesAPodsPageCacheOnTheRealController: a pod cgroup below a test pods cgroup on
// this host's cgroup v1 memory controller holds the page cache of a file a process in it read; Pods,
// asked for the pod's UID, frees most of it.
func TestPodsFreesAPodsPageCacheOnTheRealController(t *testing.T) {
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(t, "real cgroup v1 memory controller: %s", why)
	}
	const uid = "0000aaaa-0000-0000-0000-000000000001"
	top := cgrouptest.RandomName("pressure-reclaim-pods")
	t.Cleanup(func() {
		if err := cgrouptest.Remove(filepath.Join(cgrouptest.V1Memory, top)); err != nil {
			t.Errorf("remove %s: %v", top, err)
		}
	})
	pod := filepath.Join(cgrouptest.V1Memory, top, "kubepods", "besteffort", "pod"+uid)
	if err := cgrouptest.Mkdir(pod, 1<<30); err != nil {
		t.Fatal(err)
	}
	file := cgrouptest.CacheFile(t, 200<<20)
	// The reader leaves the file's pages charged to the pod cgroup after it exits (cgroup v1).
	cmd := exec.Command("sh", "-c", `echo $$ > "$1/cgroup.procs" && cat "$2" > /dev/null`, "sh", pod, file)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("read the file in %s: %v\n%s", pod, err, out)
	}
	before, err := cgrouptest.ReadUint(filepath.Join(pod, "memory.usage_in_bytes"))
	if err != nil || before < 150<<20 {
		t.Fatalf("pod cgroup usage %d (%v): want the file's 200Mi of page cache charged to it", before, err)
	}
	l := cgroupfs.Layout{Version: cgroupfs.V1, Memory: cgrouptest.V1Memory, Driver: cgroupfs.DriverCgroupfs,
		PodsCgroup: filepath.Join(top, "kubepods")}
	r := NewPods(l, 1<<30, 0)
	freed, err := r.ReclaimPod(context.Background(), uid, 150<<20)
	if err != nil {
		t.Fatalf("ReclaimPod: %v", err)
	}
	after, _ := cgrouptest.ReadUint(filepath.Join(pod, "memory.usage_in_bytes"))
	t.Logf("pod cgroup usage %dMi -> %dMi, freed %dMi", before>>20, after>>20, freed>>20)
	if freed < 100<<20 {
		t.Errorf("freed %dMi of the 150Mi asked, want most of it", freed>>20)
	}
	if _, err := r.ReclaimPod(context.Background(), "0000aaaa-0000-0000-0000-000000000002", 1<<20); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReclaimPod of an unlisted pod: %v, want an error wrapping fs.ErrNotExist", err)
	}
}
