package vm

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Builder compiles static linux/amd64 binaries for the guest from the module at Root.
type Builder struct {
	Root string // the module root (holds go.mod)
	Out  string // directory for the binaries
	// Nice, when > 0, runs the compiler under nice -n Nice (the machine is shared).
	Nice int
}

// Init builds the guest init (./test/vm/guestinit) and returns its path.
func (b Builder) Init(ctx context.Context) (string, error) {
	out := filepath.Join(b.Out, "init")
	return out, b.goCmd(ctx, "build", "-trimpath", "-o", out, "./test/vm/guestinit")
}

// Command builds the command pkg (e.g. "./bench/detection") and returns its path.
func (b Builder) Command(ctx context.Context, pkg string) (string, error) {
	out := filepath.Join(b.Out, filepath.Base(pkg))
	return out, b.goCmd(ctx, "build", "-trimpath", "-o", out, pkg)
}

// Test builds the test binary of pkg (e.g. "./internal/notify") with go test -c and returns its path.
func (b Builder) Test(ctx context.Context, pkg string) (string, error) {
	name := strings.ReplaceAll(strings.Trim(pkg, "./"), "/", "_") + ".test"
	out := filepath.Join(b.Out, name)
	return out, b.goCmd(ctx, "test", "-c", "-trimpath", "-ldflags=-s -w", "-o", out, pkg)
}

func (b Builder) goCmd(ctx context.Context, args ...string) error {
	// go test and go run put their own GOROOT/bin first in PATH, so this is the go that runs the tests.
	argv := append([]string{"go"}, args...)
	if b.Nice > 0 {
		argv = append([]string{"nice", "-n", fmt.Sprint(b.Nice)}, argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = b.Root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}
