package notify_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/kube-pressure/pressure/internal/notify"
)

// psiFiles are the memory PSI files of this host: node-wide and the cgroup2 root.
var psiFiles = []string{"/proc/pressure/memory", "/sys/fs/cgroup/unified/memory.pressure"}

func TestPSITriggerArmsWithA2sWindow(t *testing.T) {
	for _, p := range psiFiles {
		t.Run(p, func(t *testing.T) {
			if _, err := os.Stat(p); err != nil {
				t.Skipf("no PSI file here: %v", err)
			}
			tr, err := notify.ArmPSI(p, "some", 150*time.Millisecond, 2*time.Second)
			if err != nil {
				t.Skipf("kernel rejected a 2s-window trigger on %s: %v", p, err)
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

func TestPSITriggerRejectionIsReportedWithItsErrno(t *testing.T) {
	p := psiFiles[0]
	if _, err := os.Stat(p); err != nil {
		t.Skipf("no PSI file here: %v", err)
	}
	tr, err := notify.ArmPSI(p, "some", 150*time.Millisecond, time.Second)
	if err == nil {
		tr.Close()
		t.Skipf("kernel accepted a 1s window on %s (writer has CAP_SYS_RESOURCE or an older kernel); nothing to check", p)
	}
	if !errors.Is(err, notify.ErrTriggerRejected) || !errors.Is(err, unix.EINVAL) {
		t.Errorf("ArmPSI(1s window) error = %v, want ErrTriggerRejected wrapping EINVAL", err)
	}
	t.Logf("rejection as reported: %v", err)
}

func TestPSITriggerOnMissingFileIsRejected(t *testing.T) {
	_, err := notify.ArmPSI(filepath.Join(t.TempDir(), "memory.pressure"), "some", time.Second, 2*time.Second)
	if !errors.Is(err, notify.ErrTriggerRejected) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ArmPSI(missing) error = %v, want ErrTriggerRejected wrapping ENOENT", err)
	}
}
