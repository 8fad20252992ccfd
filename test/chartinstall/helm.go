package chartinstall

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Helm is a helm binary run with a private helm home, so that no repository or plugin of the
// machine leaks in.
type Helm struct {
	// Bin is the helm binary.
	Bin string
	// Home holds helm's cache, config and data directories.
	Home string
}

// FindHelm returns the pinned helm, built by hack/install-helm.sh of the module at root on first
// use (from the Go module proxy, about a minute), with its home in home.
func FindHelm(ctx context.Context, root, home string) (Helm, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(root, "hack", "install-helm.sh"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return Helm{}, fmt.Errorf("hack/install-helm.sh: %s: %w", strings.TrimSpace(stderr.String()), err)
	}
	return Helm{Bin: strings.TrimSpace(string(out)), Home: home}, nil
}

// Run runs helm with args and returns its stdout; an error carries stdout and stderr.
func (h Helm) Run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, h.Bin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+h.Home+"/cache", "HELM_CONFIG_HOME="+h.Home+"/config",
		"HELM_DATA_HOME="+h.Home+"/data")
	if err := cmd.Run(); err != nil {
		return stdout.String(), errors.Join(err, errors.New(stdout.String()+stderr.String()))
	}
	return stdout.String(), nil
}
