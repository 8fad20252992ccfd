package vm_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kube-pressure/pressure/internal/testenv"
	"github.com/kube-pressure/pressure/test/vm"
)

// guest finds the guest's parts or skips with the set-up command. Under CI=true (as make test's
// vm-deps would) it runs hack/install-vm-deps.sh first and fails when a part is still missing.
func guest(t *testing.T) vm.Guest {
	t.Helper()
	g, err := vm.Find("")
	if err == nil {
		return g
	}
	if !testenv.InCI() {
		t.Skipf("cgroup v2 guest skipped: %v", err) // not in CI: under CI=true the code below installs it or fails
	}
	cmd := exec.Command(filepath.Join(moduleRoot(t), "hack", "install-vm-deps.sh"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("cgroup v2 guest cannot run under CI: hack/install-vm-deps.sh: %v\n%s", err, out)
	}
	if g, err = vm.Find(""); err != nil {
		t.Fatalf("cgroup v2 guest cannot run under CI: %v", err)
	}
	return g
}

// builder compiles into a test temp dir from the module root, niced (the machine is shared).
func builder(t *testing.T) vm.Builder {
	return vm.Builder{Root: moduleRoot(t), Out: t.TempDir(), Nice: 15}
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(wd, "/test/vm")
}

func TestGuestBootsWithTheCgroup2Controllers(t *testing.T) {
	g := guest(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b := builder(t)
	initBin, err := b.Init(ctx)
	if err != nil {
		t.Fatal(err)
	}
	progs := []vm.Program{
		{Name: "controllers", Path: "/bin/cat", Args: []string{"/sys/fs/cgroup/cgroup.subtree_control", "/proc/cmdline"}},
		{Name: "fails", Path: "/bin/sh", Args: []string{"-c", "echo on purpose; exit 3"}},
	}
	start := time.Now()
	res, err := g.Run(ctx, initBin, progs, vm.Options{Dir: t.TempDir(), Nice: 15})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("boot, two programs and power-off in %s", time.Since(start).Round(time.Millisecond))
	if len(res) != 2 {
		t.Fatalf("got %d results, want 2: %+v", len(res), res)
	}
	if res[0].Exit != 0 {
		t.Errorf("controllers: exit %d, want 0; output %q", res[0].Exit, res[0].Output)
	}
	enabled := strings.Fields(strings.SplitN(res[0].Output, "\n", 2)[0])
	for _, c := range []string{"memory", "pids", "io"} {
		if !slices.Contains(enabled, c) {
			t.Errorf("cgroup.subtree_control of the guest's root = %q, want it to hold %s", enabled, c)
		}
	}
	if res[1].Exit != 3 || !strings.Contains(res[1].Output, "on purpose") {
		t.Errorf("fails: exit %d, output %q; want 3 and its output", res[1].Exit, res[1].Output)
	}
}
