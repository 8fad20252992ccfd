package actuate

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
		if os.Getenv("CI") == "true" {
			t.Fatalf("real cgroup v1 test cannot run under CI: %s", why)
		}
		t.Skipf("real cgroup v1 test skipped: %s", why)
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

func TestCgroupKillerKillsEveryProcessOfThePodOnTheRealV1MemoryController(t *testing.T) {
	parent := testParentCgroup(t)
	k := &CgroupKiller{Root: cgroupRoot, Pods: parent + "/kubepods"}
	const uid = "0f9e8d7c-1111-2222-3333-444455556666"
	dirs, err := k.PodCgroups("Burstable", uid)
	if err != nil {
		t.Fatal(err)
	}
	pod := dirs[0]
	if want := filepath.Join(cgroupRoot, "memory", parent, "kubepods/burstable/pod"+uid); pod != want {
		t.Fatalf("v1 cgroupfs pod cgroup %s, want %s", pod, want)
	}
	victims := []*exec.Cmd{
		sleeper(t, filepath.Join(pod, "pause")),
		sleeper(t, filepath.Join(pod, "app")),
		sleeper(t, filepath.Join(pod, "app")),
		sleeper(t, filepath.Join(pod, "sidecar", "nested")),
	}
	bystander := sleeper(t, filepath.Join(cgroupRoot, "memory", parent, "kubepods/burstable/pod-other"))

	var want []int
	for _, c := range victims {
		want = append(want, c.Process.Pid)
	}
	sort.Ints(want)
	got, err := CgroupProcs(pod)
	if err != nil || !cmp.Equal(got, want) {
		t.Fatalf("CgroupProcs = %v, %v; want %v", got, err, want)
	}

	n, err := k.KillPod(PodRef{Namespace: "shop", Name: "web", UID: uid, QOSClass: "Burstable"})
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

func TestCgroupKillerRefusesWhatIsNotAPodCgroup(t *testing.T) {
	k := &CgroupKiller{Root: "/sys/fs/cgroup"}
	for _, dir := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/memory/kubepods",
		"/sys/fs/cgroup/memory/kubepods/burstable", "/tmp/pod1234", "/sys/fs/cgroup/../../tmp/pod1"} {
		if _, err := k.Kill(dir); !errors.Is(err, ErrNotPodCgroup) {
			t.Errorf("Kill(%s) error %v, want ErrNotPodCgroup", dir, err)
		}
	}
}

func TestCgroupKillerReportsAPodWithoutCgroups(t *testing.T) {
	k := &CgroupKiller{Root: t.TempDir()}
	if _, err := k.KillPod(PodRef{UID: "0f9e8d7c-0000-0000-0000-000000000000", QOSClass: "BestEffort"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v, want fs.ErrNotExist", err)
	}
}

func TestPodCgroups(t *testing.T) {
	k := &CgroupKiller{Root: "/sys/fs/cgroup"}
	cases := []struct {
		qos  string
		want []string
	}{
		{"Guaranteed", []string{
			"/sys/fs/cgroup/memory/kubepods/pod1-2",
			"/sys/fs/cgroup/memory/kubepods.slice/kubepods-pod1_2.slice",
			"/sys/fs/cgroup/kubepods/pod1-2",
			"/sys/fs/cgroup/kubepods.slice/kubepods-pod1_2.slice",
		}},
		{"BestEffort", []string{
			"/sys/fs/cgroup/memory/kubepods/besteffort/pod1-2",
			"/sys/fs/cgroup/memory/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1_2.slice",
			"/sys/fs/cgroup/kubepods/besteffort/pod1-2",
			"/sys/fs/cgroup/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod1_2.slice",
		}},
	}
	for _, tc := range cases {
		t.Run(tc.qos, func(t *testing.T) {
			got, err := k.PodCgroups(tc.qos, "1-2")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(got, tc.want); diff != "" {
				t.Errorf("paths (-got +want):\n%s", diff)
			}
		})
	}
}

func TestPodCgroupsRefusesUIDsAndQoSClassesThatCannotNameAPodCgroup(t *testing.T) {
	k := &CgroupKiller{Root: "/sys/fs/cgroup"}
	for _, tc := range []struct{ name, qos, uid string }{
		{"uid climbing out of the QoS cgroup", "BestEffort", "../../system.slice"},
		{"uid with a slash", "Burstable", "a/b"},
		{"uid with a dot", "Burstable", "0f9e.8d7c"},
		{"empty uid", "Burstable", ""},
		{"uid with a leading dash", "Burstable", "-0f9e"},
		{"uid of 65 characters", "Burstable", strings.Repeat("a", 65)},
		{"qos class naming a path", "../../x", "0f9e8d7c"},
		{"unknown qos class", "Critical", "0f9e8d7c"},
		{"empty qos class", "", "0f9e8d7c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := k.PodCgroups(tc.qos, types.UID(tc.uid)); !errors.Is(err, ErrBadPodRef) {
				t.Errorf("PodCgroups(%q, %q) = %v, %v; want ErrBadPodRef", tc.qos, tc.uid, got, err)
			}
			if _, err := k.KillPod(PodRef{UID: types.UID(tc.uid), QOSClass: tc.qos}); !errors.Is(err, ErrBadPodRef) {
				t.Errorf("KillPod error %v, want ErrBadPodRef", err)
			}
		})
	}
	for _, uid := range []string{"0f9e8d7c-1111-2222-3333-444455556666", "d41d8cd98f00b204e9800998ecf8427e", "1-2"} {
		if _, err := k.PodCgroups("burstable", types.UID(uid)); err != nil {
			t.Errorf("PodCgroups(burstable, %q): %v", uid, err)
		}
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
