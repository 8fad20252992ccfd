//go:build linux

package cgroupkill

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/source/cgroupfs"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// v2Mount returns the first cgroup2 mount of this host (/sys/fs/cgroup on a unified host,
// /sys/fs/cgroup/unified on a hybrid one), or "" and why there is none usable.
func v2Mount() (string, string) {
	if os.Geteuid() != 0 {
		return "", "needs root to create cgroups"
	}
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return "", err.Error()
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 3 && fields[2] == "cgroup2" {
			return fields[1], ""
		}
	}
	return "", "no cgroup2 mount in /proc/self/mounts"
}

// testV2Parent skips (fails under CI) without a cgroup2 mount whose cgroups have cgroup.kill (Linux
// 5.14+), and returns a fresh parent cgroup below it, removed with everything below it after the test.
func testV2Parent(t *testing.T) (mount, parent string) {
	t.Helper()
	skip := func(why string) {
		t.Helper()
		testenv.SkipOrFail(t, "real cgroup v2 test cannot run: %s", why)
	}
	mount, why := v2Mount()
	if why != "" {
		skip(why)
	}
	parent = randomName("pressure-cgroupkill-test")
	dir := filepath.Join(mount, parent)
	if err := os.Mkdir(dir, 0o755); err != nil {
		skip("cannot create a cgroup below " + mount + ": " + err.Error())
	}
	t.Cleanup(func() { removeCgroups(t, dir) })
	if _, err := os.Stat(filepath.Join(dir, "cgroup.kill")); err != nil {
		skip("no cgroup.kill (Linux 5.14+) on " + mount + ": " + err.Error())
	}
	return mount, parent
}

func v2Layout(mount, pods string) cgroupfs.Layout {
	return cgroupfs.Layout{Version: cgroupfs.V2, Memory: mount, Driver: cgroupfs.DriverCgroupfs, PodsCgroup: pods}
}

func TestCgroupKillEndsEveryProcessOfTheSubtreeOnTheRealV2Hierarchy(t *testing.T) {
	mount, parent := testV2Parent(t)
	pod := filepath.Join(mount, parent, "kubepods/burstable/pod0f9e8d7c-1111")
	victims := []*exec.Cmd{
		sleeper(t, filepath.Join(pod, "app")),
		sleeper(t, filepath.Join(pod, "sidecar", "nested")),
	}
	if err := writeCgroupKill(pod); err != nil {
		t.Fatalf("cgroup.kill of %s: %v", pod, err)
	}
	for _, p := range victims {
		waitKilled(t, p)
	}
}

func TestKillerKillsThePodOnTheRealV2HierarchyAndSparesItsNeighbour(t *testing.T) {
	mount, parent := testV2Parent(t)
	const uid = "0f9e8d7c-1111-2222-3333-444455556666"
	pods := filepath.Join(mount, parent, "kubepods")
	victims := []*exec.Cmd{
		sleeper(t, filepath.Join(pods, "burstable", "pod"+uid, "app")),
		sleeper(t, filepath.Join(pods, "burstable", "pod"+uid, "app")),
		sleeper(t, filepath.Join(pods, "burstable", "pod"+uid, "sidecar", "nested")),
	}
	bystander := sleeper(t, filepath.Join(pods, "burstable", "pod0f9e8d7c-other", "app"))
	k := &Killer{Layout: v2Layout(mount, filepath.Join(parent, "kubepods"))}
	if n, err := k.KillPod(uid); err != nil || n != len(victims) {
		t.Errorf("KillPod = %d, %v; want %d, nil", n, err, len(victims))
	}
	for _, p := range victims {
		waitKilled(t, p)
	}
	if err := bystander.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the other pod's process %d was hit: %v", bystander.Process.Pid, err)
	}
}

// TestKillerFallsBackToPidfdsOnAReadOnlyV2Mount is the agent's case: its cgroup mount is read-only
// (recursiveReadOnly), so cgroup.kill fails with EROFS and the kill goes through pidfds instead.
func TestKillerFallsBackToPidfdsOnAReadOnlyV2Mount(t *testing.T) {
	mount, parent := testV2Parent(t)
	const uid = "0f9e8d7c-1111-2222-3333-444455556666"
	rw := filepath.Join(mount, parent)
	victims := []*exec.Cmd{
		sleeper(t, filepath.Join(rw, "kubepods", "besteffort", "pod"+uid, "app")),
		sleeper(t, filepath.Join(rw, "kubepods", "besteffort", "pod"+uid, "sidecar")),
	}
	ro := t.TempDir()
	if err := unix.Mount(rw, ro, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind %s on %s: %v", rw, ro, err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(ro, unix.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", ro, err)
		}
	})
	if err := unix.Mount("", ro, "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount %s read-only: %v", ro, err)
	}
	pod := filepath.Join(ro, "kubepods", "besteffort", "pod"+uid)
	if err := writeCgroupKill(pod); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("cgroup.kill on the read-only mount: %v, want EROFS (else this test shows nothing)", err)
	}
	k := &Killer{Layout: v2Layout(ro, "kubepods")}
	if n, err := k.KillPod(uid); err != nil || n != len(victims) {
		t.Errorf("KillPod on the read-only mount = %d, %v; want %d, nil", n, err, len(victims))
	}
	for _, p := range victims {
		waitKilled(t, p)
	}
}

// TestKillerKillsAProcessTreeOnTheRealV2Hierarchy: a shell with two children and an orphaned grandchild
// (re-parented away from the shell) in one container cgroup; the kill ends all four, the orphan included.
func TestKillerKillsAProcessTreeOnTheRealV2Hierarchy(t *testing.T) {
	mount, parent := testV2Parent(t)
	const uid = "0f9e8d7c-1111-2222-3333-555555555555"
	app := filepath.Join(mount, parent, "kubepods", "burstable", "pod"+uid, "app")
	if err := os.MkdirAll(app, 0o755); err != nil {
		t.Fatal(err)
	}
	tree := exec.Command("sh", "-c", "read x; sleep 600 & sleep 600 & (sleep 600 &); wait")
	in, err := tree.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := tree.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tree.Process.Kill(); _ = tree.Wait() })
	if err := os.WriteFile(filepath.Join(app, "cgroup.procs"), []byte(strconv.Itoa(tree.Process.Pid)), 0); err != nil {
		t.Fatal(err)
	}
	in.Close() // the shell forks its tree only once it is in the cgroup
	pids := waitSleepers(t, app, 3)
	k := &Killer{Layout: v2Layout(mount, filepath.Join(parent, "kubepods"))}
	if n, err := k.KillPod(uid); err != nil || n != 4 {
		t.Errorf("KillPod = %d, %v; want 4 (shell, two children, the orphan), nil", n, err)
	}
	waitKilled(t, tree)
	for _, pid := range pids {
		waitGone(t, pid)
	}
}

// waitSleepers waits up to 5s for dir's cgroup to hold the shell and n sleep processes and nothing else:
// the subshell that orphans its sleep is briefly a fourth process beside two sleeps, and a count alone
// would take that moment for the settled tree (seen in the guest: KillPod = 5).
func waitSleepers(t *testing.T, dir string, n int) []int {
	t.Helper()
	var pids []int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var err error
		if pids, err = CgroupProcs(dir); err != nil {
			t.Fatal(err)
		}
		sleeps := 0
		for _, pid := range pids {
			if comm, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "comm")); err == nil && string(comm) == "sleep\n" {
				sleeps++
			}
		}
		if len(pids) == n+1 && sleeps == n {
			return pids
		}
	}
	t.Fatalf("cgroup %s holds pids %v, want a shell and %d sleep processes", dir, pids, n)
	return nil
}

// waitGone waits up to 5s for pid to be gone or a zombie (a process no longer running).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return
		}
		if f := strings.Fields(string(b)); len(f) > 2 && f[2] == "Z" {
			return
		}
	}
	t.Errorf("pid %d still running 5s after the kill", pid)
}
