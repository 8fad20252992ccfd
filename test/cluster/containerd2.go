package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Containerd2 is a containerd 2 build (hack/build-containerd.sh): containerd, its runc shim and ctr.
// Debian 12's containerd 1.6 cannot mount a volume recursively read-only (recursiveReadOnly: Enabled
// needs containerd 2.0+, runc 1.1+ and Linux 5.12+), so a test of a chart setting that needs it starts
// its node with NodeOptions.Containerd2.
type Containerd2 struct {
	// Dir holds containerd, containerd-shim-runc-v2 and ctr.
	Dir string
}

// containerd2Bins are the programs hack/build-containerd.sh builds.
var containerd2Bins = []string{"containerd", "containerd-shim-runc-v2", "ctr"}

// FindContainerd2 returns the containerd 2 build of hack/build-containerd.sh without building it; it
// wraps ErrNotBuilt when it is not built.
func FindContainerd2(ctx context.Context, repo string) (Containerd2, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "hack", "build-containerd.sh"), "--check")
	cmd.Dir = repo
	out, err := cmd.Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 3 {
		return Containerd2{}, fmt.Errorf("%w: containerd 2 not in %s", ErrNotBuilt, strings.TrimSpace(string(out)))
	}
	return containerd2From(out, err)
}

// BuildContainerd2 runs hack/build-containerd.sh (a no-op when built) and returns the directory it
// prints. The script's progress goes to stderr.
func BuildContainerd2(ctx context.Context, repo string, stderr *os.File) (Containerd2, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "hack", "build-containerd.sh"))
	cmd.Dir = repo
	cmd.Stderr = stderr
	return containerd2From(cmd.Output())
}

// containerd2From checks the directory the script printed.
func containerd2From(out []byte, err error) (Containerd2, error) {
	if err != nil {
		return Containerd2{}, fmt.Errorf("hack/build-containerd.sh: %w", err)
	}
	c := Containerd2{Dir: strings.TrimSpace(string(out))}
	for _, b := range containerd2Bins {
		if fi, err := os.Stat(filepath.Join(c.Dir, b)); err != nil || fi.Mode()&0o111 == 0 {
			return c, fmt.Errorf("hack/build-containerd.sh printed %s but %s is not an executable there", c.Dir, b)
		}
	}
	return c, nil
}

// containerd2Config is containerd 2's config (version 3) with the same choices as containerdConfig:
// its own root, state and socket, our pause image pinned as the sandbox, cgroupfs, overlayfs,
// restrict_oom_score_adj, and the CNI plugins of Debian's package.
func containerd2Config(opts NodeOptions) string {
	return fmt.Sprintf(`version = 3
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.erofs"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = %q

[plugins."io.containerd.cri.v1.runtime"]
  enable_selinux = false
  restrict_oom_score_adj = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["/usr/lib/cni"]
    conf_dir = %q
    max_conf_num = 1
`, configArgs(opts)...)
}
