package notify_test

import (
	"context"
	"errors"
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

// psiFiles are the memory PSI files of this host: node-wide and the cgroup2 root.
var psiFiles = []string{"/proc/pressure/memory", "/sys/fs/cgroup/unified/memory.pressure"}

// requirePSIFile skips (fails under CI=true) when the kernel has no PSI file p.
func requirePSIFile(t *testing.T, p string) {
	t.Helper()
	if _, err := os.Stat(p); err != nil {
		testenv.SkipOrFail(t, "no PSI file here: %v", err)
	}
}

func TestPSITriggerArmsWithA2sWindow(t *testing.T) {
	for _, p := range psiFiles {
		t.Run(p, func(t *testing.T) {
			requirePSIFile(t, p)
			tr, err := notify.ArmPSI(p, "some", 150*time.Millisecond, 2*time.Second)
			if err != nil {
				// A 2 s window is valid for every writer on every kernel with PSI triggers, so EINVAL
				// (a malformed trigger) is a bug. Only a kernel that refuses triggers altogether may
				// skip: EPERM (before Linux 6.4 a writer needs CAP_SYS_RESOURCE) or EOPNOTSUPP (psi=0).
				var errno unix.Errno
				if errors.Is(err, notify.ErrTriggerRejected) && errors.As(err, &errno) &&
					(errno == unix.EPERM || errno == unix.EOPNOTSUPP) {
					testenv.SkipOrFail(t, "kernel refuses PSI triggers on %s: errno %d (%s): %v", p, int(errno), unix.ErrnoName(errno), err)
				}
				t.Fatalf("ArmPSI(%s, some 150ms/2s) = %v, want an armed trigger", p, err)
			}
			if tr.Spec != "some 150000 2000000" {
				t.Errorf("Spec = %q, want %q", tr.Spec, "some 150000 2000000")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			if err := tr.Run(ctx, make(chan struct{}, 1)); err != nil {
				t.Errorf("Run() = %v, want nil after the context ends", err)
			}
		})
	}
}

// psiRejectionChildEnv makes the re-executed test binary run the body of
// TestPSITriggerRejectionIsReportedWithItsErrno itself (it is then an unprivileged process).
const psiRejectionChildEnv = "PRESSURE_NOTIFY_PSI_REJECTION_CHILD"

// The kernel refuses a 1 s window from a writer without CAP_SYS_RESOURCE (EINVAL from Linux 6.4 on,
// where unprivileged windows must be multiples of 2 s; EPERM before, where unprivileged writers get
// no trigger at all). Run as root (as CI is) the test re-executes itself as uid/gid 65534 (nobody)
// with no capabilities, so that the rejection path runs everywhere.
func TestPSITriggerRejectionIsReportedWithItsErrno(t *testing.T) {
	p := psiFiles[0]
	requirePSIFile(t, p)
	if os.Geteuid() == 0 && os.Getenv(psiRejectionChildEnv) == "" {
		runRejectionAsNobody(t)
		return
	}
	tr, err := notify.ArmPSI(p, "some", 150*time.Millisecond, time.Second)
	if err == nil {
		tr.Close()
		t.Fatalf("uid %d (no CAP_SYS_RESOURCE) armed a 1s window on %s, want a rejection", os.Geteuid(), p)
	}
	var errno unix.Errno
	if !errors.Is(err, notify.ErrTriggerRejected) || !errors.As(err, &errno) || (errno != unix.EINVAL && errno != unix.EPERM) {
		t.Errorf("ArmPSI(1s window) as uid %d error = %v, want ErrTriggerRejected wrapping EINVAL (Linux 6.4+) or EPERM", os.Geteuid(), err)
	}
	t.Logf("uid %d: rejection as reported: %v (errno %s)", os.Geteuid(), err, unix.ErrnoName(errno))
}

// runRejectionAsNobody runs TestPSITriggerRejectionIsReportedWithItsErrno in a copy of the test binary as
// uid/gid 65534 without capabilities, and fails t with the child's output unless the child passed.
func runRejectionAsNobody(t *testing.T) {
	t.Helper()
	cmd := exec.Command(executableCopy(t), "-test.run=^TestPSITriggerRejectionIsReportedWithItsErrno$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), psiRejectionChildEnv+"=1")
	cmd.Dir = filepath.Dir(cmd.Path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestPSITriggerRejectionIsReportedWithItsErrno") {
		t.Fatalf("the test as uid 65534: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "rejection as reported") {
			t.Log(strings.TrimSpace(l))
		}
	}
}

func TestPSITriggerOnMissingFileIsRejected(t *testing.T) {
	_, err := notify.ArmPSI(filepath.Join(t.TempDir(), "memory.pressure"), "some", time.Second, 2*time.Second)
	if !errors.Is(err, notify.ErrTriggerRejected) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ArmPSI(missing) error = %v, want ErrTriggerRejected wrapping ENOENT", err)
	}
}
