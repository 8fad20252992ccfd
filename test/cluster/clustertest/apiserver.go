package clustertest

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// OlderAPIServer returns the path of the kube-apiserver of an older supported release (minor "v1.34",
// "v1.35", "v1.36": the modules under test/tools/apiserver), built by hack/build-apiserver.sh when
// PRESSURE_BUILD=1 (8-30 CPU-minutes cold each, then cached). Otherwise a release not built yet skips
// with how to build it, in CI too, like the differential test's oracles: two cold builds would push a
// fresh machine's make test past CI's 90 minutes, so `make test-versions` builds them once and from then
// on make test installs on every release.
func OlderAPIServer(t testing.TB, minor string) string {
	t.Helper()
	return olderBinary(t, "kube-apiserver", minor)
}

// OlderScheduler is OlderAPIServer for the kube-scheduler of an older release (the modules under
// test/tools/scheduler; a cold build shares most of its packages with the API server's, so it takes
// minutes once that is built).
func OlderScheduler(t testing.TB, minor string) string {
	t.Helper()
	return olderBinary(t, "kube-scheduler", minor)
}

func olderBinary(t testing.TB, component, minor string) string {
	t.Helper()
	script := filepath.Join(repoRoot(t), "hack", "build-apiserver.sh")
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Minute)
	defer cancel()
	args := []string{component, minor, "--check"}
	if os.Getenv("PRESSURE_BUILD") == "1" {
		args = args[:2]
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, script, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) && ee.ExitCode() == 3 {
		t.Skipf("skipping %s %s: %s; build it with `make test-versions`, `hack/build-apiserver.sh %s %s` or PRESSURE_BUILD=1",
			component, minor, strings.TrimSpace(stderr.String()), component, minor)
	}
	if err != nil {
		t.Fatalf("hack/build-apiserver.sh %s %s: %v\n%s", component, minor, err, stderr.String())
	}
	return filepath.Join(strings.TrimSpace(stdout.String()), component)
}
