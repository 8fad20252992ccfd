package notify_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/notify"
	"github.com/kube-pressure/pressure/internal/testenv"
)

// armPSIEnv asks the test binary, re-executed as another user, to arm one trigger on
// /proc/pressure/memory with the window it names and exit (see armPSIIfRequested).
const armPSIEnv = "PRESSURE_NOTIFY_ARM_PSI_WINDOW"

// armPSIIfRequested arms the requested trigger, prints "armed" or the error, and exits.
func armPSIIfRequested() {
	w := os.Getenv(armPSIEnv)
	if w == "" {
		return
	}
	d, err := time.ParseDuration(w)
	if err == nil {
		var tr *notify.PSITrigger
		if tr, err = notify.ArmPSI("/proc/pressure/memory", "some", d/10, d); err == nil {
			tr.Close()
			fmt.Println("armed")
			os.Exit(0)
		}
	}
	fmt.Println(err)
	os.Exit(1)
}

// armAs arms a trigger with window w in a re-executed test binary running as uid/gid 65532 (the
// chart's user) with the ambient capabilities caps, and returns its output and whether it armed.
func armAs(t *testing.T, bin string, w time.Duration, caps ...uintptr) (string, bool) {
	t.Helper()
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), armPSIEnv+"="+w.String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65532, Gid: 65532}, AmbientCaps: caps}
	out, err := cmd.CombinedOutput()
	if err != nil && len(out) == 0 {
		return err.Error(), false
	}
	return strings.TrimSpace(string(out)), err == nil
}

// What the chart grants follows from this: a 2 s window arms with no privilege (Linux 6.4+), a
// sub-second one only with CAP_SYS_RESOURCE (agent.notifiers.psi.subSecond).
func TestPSIWindowsBelow2sNeedCapSysResource(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(t, "the PSI privilege test needs root (to run a child as another user)")
	}
	requirePSIFile(t, "/proc/pressure/memory")
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		t.Fatal(err)
	}
	release := unix.ByteSliceToString(u.Release[:])
	var major, minor int
	if _, err := fmt.Sscanf(release, "%d.%d", &major, &minor); err != nil || major < 6 || major == 6 && minor < 4 {
		testenv.SkipOrFail(t, "Linux %s: unprivileged PSI triggers exist from 6.4 on; nothing to compare", release)
	}
	bin := executableCopy(t)
	if out, ok := armAs(t, bin, 2*time.Second); !ok {
		t.Errorf("uid 65532 without capabilities, 2s window: not armed: %s", out)
	}
	if out, ok := armAs(t, bin, 500*time.Millisecond); ok {
		t.Errorf("uid 65532 without capabilities, 500ms window: armed, want a refusal (%s)", out)
	} else {
		t.Logf("uid 65532 without capabilities, 500ms window refused: %s", out)
	}
	t.Run("with CAP_SYS_RESOURCE a 500ms window arms", func(t *testing.T) {
		if why := notInBoundingSet(unix.CAP_SYS_RESOURCE); why != "" {
			// Not a silent skip in CI: the CI host's container has no CAP_SYS_RESOURCE in its
			// bounding set (CapBnd 000001fffeffffff), so no process there can be granted it. The
			// same fact, a sub-second window arms with CAP_SYS_RESOURCE, is checked under CI in the
			// cgroup v2 guest, where root has every capability:
			// TestPSITriggerWithASubSecondWindowFiresOnARealV2Cgroup (run by test/vm TestGuest).
			t.Skipf("cannot grant CAP_SYS_RESOURCE here: %s", why)
		}
		if out, ok := armAs(t, bin, 500*time.Millisecond, unix.CAP_SYS_RESOURCE); !ok {
			t.Errorf("uid 65532 with CAP_SYS_RESOURCE, 500ms window: not armed: %s", out)
		}
	})
}

// notInBoundingSet says why capability c cannot be granted to a child, or "" when it can.
func notInBoundingSet(c uintptr) string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return err.Error()
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "CapBnd:"); ok {
			var set uint64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%x", &set); err != nil {
				return fmt.Sprintf("/proc/self/status CapBnd %q: %v", v, err)
			}
			if set&(1<<c) == 0 {
				return fmt.Sprintf("capability %d is not in this process's bounding set (CapBnd %016x)", c, set)
			}
			return ""
		}
	}
	return "/proc/self/status has no CapBnd line"
}

// executableCopy copies the test binary where uid 65532 may run it (go test's build directory is
// root's, mode 0700).
func executableCopy(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pressure-notify-psi-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "notify.test")
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}
