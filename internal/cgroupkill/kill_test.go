package cgroupkill

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/testenv"
)

const cgroupRoot = "/sys/fs/cgroup"

// realV1 reports why the real cgroup v1 memory controller cannot be used here, or "".
func realV1() string {
	if os.Geteuid() != 0 {
		return "needs root to create cgroups"
	}
	if _, err := os.Stat(filepath.Join(cgroupRoot, "memory", "cgroup.procs")); err != nil {
		return "no cgroup v1 memory controller at " + cgroupRoot + "/memory: " + err.Error()
	}
	return ""
}

func randomName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + "-" + hex.EncodeToString(b)
}

// removeCgroups removes dir and every cgroup below it, deepest first, retrying while exiting
// processes leave.
func removeCgroups(t *testing.T, dir string) {
	var dirs []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		var err error
		for i := 0; i < 100; i++ {
			if err = os.Remove(d); err == nil || errors.Is(err, fs.ErrNotExist) {
				err = nil
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err != nil {
			t.Errorf("remove test cgroup %s: %v", d, err)
		}
	}
}

// sleeper starts `sleep 600` in the cgroup dir.
func sleeper(t *testing.T, dir string) *exec.Cmd {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
		t.Fatalf("move pid %d into %s: %v", cmd.Process.Pid, dir, err)
	}
	return cmd
}

// testParentCgroup skips (fails under CI) without the real cgroup v1 memory controller, and returns
// the name of a fresh parent cgroup below it, removed with everything below it after the test.
func testParentCgroup(t *testing.T) string {
	t.Helper()
	if why := realV1(); why != "" {
		testenv.SkipOrFail(t, "real cgroup v1 test cannot run: %s", why)
	}
	parent := randomName("pressure-actuate-test")
	t.Cleanup(func() { removeCgroups(t, filepath.Join(cgroupRoot, "memory", parent)) })
	return parent
}

func waitKilled(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Errorf("pid %d exited with %v, want killed", cmd.Process.Pid, err)
			return
		}
		ws := ee.Sys().(syscall.WaitStatus)
		if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
			t.Errorf("pid %d ended with %v, want SIGKILL", cmd.Process.Pid, ws)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("pid %d still running 5s after the kill", cmd.Process.Pid)
	}
}

// realLayout is a v1 cgroupfs layout whose pods cgroup is parent/kubepods on the real memory controller.
func realLayout(parent string) cgroupfs.Layout {
	return cgroupfs.Layout{Version: cgroupfs.V1, Memory: filepath.Join(cgroupRoot, "memory"), Driver: cgroupfs.DriverCgroupfs,
		PodsCgroup: parent + "/kubepods"}
}

func TestKillerKillsEveryProcessOfThePodOnTheRealV1MemoryController(t *testing.T) {
	parent := testParentCgroup(t)
	k := &Killer{Layout: realLayout(parent)}
	const uid = "0f9e8d7c-1111-2222-3333-444455556666"
	pod := filepath.Join(cgroupRoot, "memory", parent, "kubepods/burstable/pod"+uid)
	victims := []*exec.Cmd{
		sleeper(t, filepath.Join(pod, "pause")),
		sleeper(t, filepath.Join(pod, "app")),
		sleeper(t, filepath.Join(pod, "app")),
		sleeper(t, filepath.Join(pod, "sidecar", "nested")),
	}
	bystander := sleeper(t, filepath.Join(cgroupRoot, "memory", parent, "kubepods/burstable/pod0f9e8d7c-other"))

	var want []int
	for _, c := range victims {
		want = append(want, c.Process.Pid)
	}
	sort.Ints(want)
	got, err := CgroupProcs(pod)
	if err != nil || !cmp.Equal(got, want) {
		t.Fatalf("CgroupProcs = %v, %v; want %v", got, err, want)
	}

	n, err := k.KillPod(uid)
	if err != nil || n != len(victims) {
		t.Errorf("KillPod = %d, %v; want %d, nil", n, err, len(victims))
	}
	for _, c := range victims {
		waitKilled(t, c)
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the other pod's process %d was hit: %v", bystander.Process.Pid, err)
	}
	if left, _ := CgroupProcs(pod); len(left) != 0 {
		t.Errorf("processes left in the pod cgroup: %v", left)
	}
}

func TestKillerRefusesWhatIsNotAPodCgroup(t *testing.T) {
	k := &Killer{Layout: cgroupfs.Layout{Memory: "/sys/fs/cgroup/memory"}}
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/kubepods",
		"/sys/fs/cgroup/memory/kubepods/burstable", "/tmp/pod1234", "/sys/fs/cgroup/memory/../../../tmp/pod1"} {
		if _, err := k.Kill(dir); !errors.Is(err, ErrNotPodCgroup) {
			t.Errorf("Kill(%s) error %v, want ErrNotPodCgroup", dir, err)
		}
	}
}

func TestKillerFindsOnlyListedPodCgroups(t *testing.T) {
	// A fixture pods cgroup with one best-effort pod: a UID that names no listed pod cgroup, however it
	// is spelled, kills nothing.
	root := t.TempDir()
	for _, dir := range []string{"pod0f9e8d7c", "pod..", "pod.slice"} {
		if err := os.MkdirAll(filepath.Join(root, "kubepods", "besteffort", dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	k := &Killer{Layout: cgroupfs.Layout{Version: cgroupfs.V1, Memory: root, Driver: cgroupfs.DriverCgroupfs, PodsCgroup: "kubepods"}}
	for _, uid := range []types.UID{"0f9e8d7c-0000-0000-0000-000000000000", "0f9e8d7d"} {
		if _, err := k.KillPod(uid); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("KillPod(%q) error %v, want fs.ErrNotExist", uid, err)
		}
	}
	// A UID that is not hex and dashes is refused before the listing, even where a directory is named
	// like it ("pod.." lists as UID "..").
	for _, uid := range []types.UID{"..", ".slice", "../../system.slice", "besteffort", "", "0f9e8d7c/..", "0F9E8D7C x"} {
		if _, err := k.KillPod(uid); !errors.Is(err, ErrBadPodUID) {
			t.Errorf("KillPod(%q) error %v, want ErrBadPodUID", uid, err)
		}
	}
	if n, err := k.KillPod("0f9e8d7c"); err != nil || n != 0 {
		t.Errorf("KillPod of the listed pod without processes = %d, %v; want 0, nil", n, err)
	}
}

// TestCgroupKillerNeverSignalsAListedPIDThatLeftTheCgroup is the PID-reuse case on the real v1
// memory controller: the list read from cgroup.procs names a PID that, by the time of the kill,
// belongs to a process outside the pod's cgroup (here: a process that was never in it, as after an
// exit and a reuse of the number). Only the member is killed.
func TestCgroupKillerNeverSignalsAListedPIDThatLeftTheCgroup(t *testing.T) {
	parent := testParentCgroup(t)
	pod := filepath.Join(cgroupRoot, "memory", parent, "kubepods/besteffort/pod0f9e8d7c")
	member := sleeper(t, filepath.Join(pod, "app"))
	outsider := sleeper(t, filepath.Join(cgroupRoot, "memory", parent, "elsewhere"))

	hit, err := signalMembers(pod, []int{member.Process.Pid, outsider.Process.Pid})
	if err != nil || !cmp.Equal(hit, []int{member.Process.Pid}) {
		t.Errorf("signalMembers = %v, %v; want [%d], nil", hit, err, member.Process.Pid)
	}
	waitKilled(t, member)
	time.Sleep(100 * time.Millisecond)
	if err := outsider.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the outsider %d, listed but not in the cgroup, was hit: %v", outsider.Process.Pid, err)
	}
}

func FuzzParseProcs(f *testing.F) {
	f.Add("1\n2\n3\n")
	f.Add("")
	f.Add("12 \n\n-1\n")
	f.Fuzz(func(t *testing.T, in string) {
		pids, err := parseProcs(strings.NewReader(in))
		if err != nil {
			return
		}
		for _, p := range pids {
			if p <= 0 {
				t.Fatalf("parsed invalid pid %d from %q", p, in)
			}
		}
	})
}
