package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/policy"
	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/source/cgroupfs/cgrouptest"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// recordingReclaimer answers each ReclaimPod with freed bytes, or err for the UIDs in fail.
type recordingReclaimer struct {
	calls []string
	freed int64
	fail  map[string]error
}

func (r *recordingReclaimer) ReclaimPod(_ context.Context, uid string, bytes int64) (int64, error) {
	r.calls = append(r.calls, uid)
	if err := r.fail[uid]; err != nil {
		return 0, err
	}
	return min(r.freed, bytes), nil
}

func TestReclaimUnavailableSaysWhyTheRungCannotAct(t *testing.T) {
	for _, tc := range []struct {
		name      string
		enabled   bool
		dry       bool
		reclaimer podReclaimer
		want      string
	}{
		{"the rung off says so", false, false, &recordingReclaimer{}, "reclaim.action.enabled is false"},
		{"a dry run writes no cgroup file", true, true, &recordingReclaimer{}, "dry run: the agent writes no cgroup file"},
		{"no reclaimer: no writable pods cgroup", true, false, nil, "no writable pods cgroup"},
		{"on, live, with a reclaimer: available", true, false, &recordingReclaimer{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, func(s *Settings) { s.Config.Reclaim.Action.Enabled, s.DryRun = tc.enabled, tc.dry })
			h.agent.Reclaimer = tc.reclaimer
			if got := h.agent.reclaimUnavailable(); got != tc.want {
				t.Errorf("reclaimUnavailable() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPlannedReclaimsRunInOrderAndTheirOutcomesGoToTheNextStep(t *testing.T) {
	h := newHarness(t, nil)
	rec := &recordingReclaimer{freed: 300 << 20, fail: map[string]error{"uid-b": errors.New("write memory.reclaim: read-only file system")}}
	h.agent.Reclaimer = rec
	h.agent.init()
	plan := policy.Plan{Reclaims: []policy.ReclaimRequest{
		{Signal: signal.AllocatableMemoryAvailable, Pod: policy.PodRef{Namespace: "default", Name: "a", UID: "uid-a"}, Bytes: 500 << 20},
		{Signal: signal.AllocatableMemoryAvailable, Pod: policy.PodRef{Namespace: "default", Name: "b", UID: "uid-b"}, Bytes: 100 << 20},
		{Signal: signal.AllocatableMemoryAvailable, Bytes: 50 << 20},
	}}
	got := h.agent.reclaim(context.Background(), plan)
	if want := []string{"uid-a", "uid-b", ""}; !reflect.DeepEqual(rec.calls, want) {
		t.Errorf("reclaimed %q, want the plan's order %q", rec.calls, want)
	}
	now := h.clock.Now()
	want := []policy.ReclaimOutcome{{UID: "uid-a", Freed: 300 << 20, At: now},
		{UID: "uid-b", Err: "write memory.reclaim: read-only file system", At: now}, {UID: "", Freed: 50 << 20, At: now}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("outcomes %+v, want %+v", got, want)
	}
	h.agent.Reclaimer = nil
	if got := h.agent.reclaim(context.Background(), plan); got != nil {
		t.Errorf("without a reclaimer: outcomes %+v, want none", got)
	}
}

// TestCgroupReclaimerFreesAPodsPageCacheOnTheRealController: a pod cgroup below a test pods cgroup on
// this host's cgroup v1 memory controller holds the page cache of a file a process in it read; the
// reclaimer, asked for the pod's UID, frees most of it.
func TestCgroupReclaimerFreesAPodsPageCacheOnTheRealController(t *testing.T) {
	if why := cgrouptest.Available(); why != "" {
		testenv.SkipOrFail(t, "real cgroup v1 memory controller: %s", why)
	}
	const uid = "0000aaaa-0000-0000-0000-000000000001"
	top := cgrouptest.RandomName("pressure-agent-reclaim")
	t.Cleanup(func() {
		if err := cgrouptest.Remove(filepath.Join(cgrouptest.V1Memory, top)); err != nil {
			t.Errorf("remove %s: %v", top, err)
		}
	})
	pod := filepath.Join(cgrouptest.V1Memory, top, "kubepods", "besteffort", "pod"+uid)
	if err := cgrouptest.Mkdir(pod, 1<<30); err != nil {
		t.Fatal(err)
	}
	file := diskFile(t, 200<<20)
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
	r := newCgroupReclaimer(l, policy.ReclaimAction{MaxBytes: 1 << 30})
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

// diskFile writes n random bytes to a file on the real disk under /var/tmp (tmpfs pages are shmem, not
// reclaimable file pages) and drops it from the page cache.
func diskFile(t *testing.T, n int64) string {
	t.Helper()
	f, err := os.CreateTemp("/var/tmp", "pressure-agent-reclaim-*.dat")
	if err != nil {
		testenv.SkipOrFail(t, "no real disk under /var/tmp: %v", err)
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	defer f.Close()
	if _, err := io.CopyN(f, rand.Reader, n); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// blockingReclaimer blocks every ReclaimPod until release is closed.
type blockingReclaimer struct{ release chan struct{} }

func (b *blockingReclaimer) ReclaimPod(context.Context, string, int64) (int64, error) {
	<-b.release
	return 1 << 20, nil
}

func TestAReclaimBlockedInTheKernelFailsAfterTheWaitAndBlocksNoSync(t *testing.T) {
	h := newHarness(t, nil)
	b := &blockingReclaimer{release: make(chan struct{})}
	h.agent.Reclaimer = b
	h.agent.init()
	plan := policy.Plan{Reclaims: []policy.ReclaimRequest{{Signal: signal.AllocatableMemoryAvailable,
		Pod: policy.PodRef{Namespace: "default", Name: "a", UID: "uid-a"}, Bytes: 100 << 20}}}
	done := make(chan []policy.ReclaimOutcome, 1)
	go func() { done <- h.agent.reclaim(context.Background(), plan) }()
	for !h.clock.HasWaiters() {
		time.Sleep(time.Millisecond)
	}
	h.clock.Step(reclaimWait)
	got := <-done
	if len(got) != 1 || !strings.Contains(got[0].Err, "still running after 3s") {
		t.Fatalf("outcomes %+v, want one failed after %s", got, reclaimWait)
	}
	// The write still runs: the next plan's reclaim is not started beside it.
	if again := h.agent.reclaim(context.Background(), plan); len(again) != 1 || !strings.Contains(again[0].Err, "still running in the kernel") {
		t.Errorf("while the first runs: %+v, want a refusal", again)
	}
	close(b.release)
	for h.agent.st.reclaiming.Load() {
		time.Sleep(time.Millisecond)
	}
	if again := h.agent.reclaim(context.Background(), plan); len(again) != 1 || again[0].Err != "" {
		t.Errorf("after it returned: %+v, want a reclaim", again)
	}
}
