package cluster

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/test/images"
)

// containerdSocket is containerd's gRPC socket in the node dir.
func containerdSocket(dir string) string { return filepath.Join(dir, "containerd.sock") }

// containerdConfig is containerd 1.6's config (version 2) with its own root, state and socket,
// the CRI plugin using our pause image and CNI config dir, cgroupfs, overlayfs, and
// restrict_oom_score_adj (root lacks CAP_SYS_RESOURCE here, so negative scores fail).
func containerdConfig(opts NodeOptions) string {
	return fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.devmapper"]

[grpc]
  address = %q

[ttrpc]
  address = %q

[plugins."io.containerd.internal.v1.opt"]
  path = %q

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = %q
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = %q
    max_conf_num = 1
`, configArgs(opts)...)
}

// configArgs are the values of both containerd configs' %q verbs, in order: root, state, the gRPC and
// ttrpc sockets, the opt dir, the sandbox (pause) image and the CNI config dir.
func configArgs(opts NodeOptions) []any {
	return []any{
		filepath.Join(opts.Dir, "containerd", "root"),
		filepath.Join(opts.Dir, "containerd", "state"),
		containerdSocket(opts.Dir),
		containerdSocket(opts.Dir) + ".ttrpc",
		filepath.Join(opts.Dir, "containerd", "opt"),
		opts.PauseImage,
		filepath.Join(opts.Dir, "cni", "net.d"),
	}
}

// containerdRun is what starting the node's containerd needs, kept in Node for a restart.
type containerdRun struct {
	argv, env []string // command line and extra environment
	dir       string   // the node dir: containerd.log and the socket
}

// containerdCommand writes containerd's config into the node dir and returns how to run it:
// containerd 2's own binary with its shim first in PATH, or the containerd in PATH.
func containerdCommand(opts NodeOptions) (containerdRun, error) {
	cfg := filepath.Join(opts.Dir, "containerd.toml")
	run := containerdRun{dir: opts.Dir}
	config, bin := containerdConfig(opts), ""
	if c := opts.Containerd2; c != nil {
		// Its own runc shim first in PATH: containerd starts containerd-shim-runc-v2 from PATH.
		config, bin = containerd2Config(opts), filepath.Join(c.Dir, "containerd")
		run.env = []string{"PATH=" + c.Dir + string(os.PathListSeparator) + os.Getenv("PATH")}
	} else {
		var err error
		if bin, err = exec.LookPath("containerd"); err != nil {
			return run, fmt.Errorf("containerd: %w", err)
		}
	}
	if err := os.WriteFile(cfg, []byte(config), 0o644); err != nil {
		return run, fmt.Errorf("write containerd config: %w", err)
	}
	run.argv = []string{bin, "--config", cfg, "--log-level", "info"}
	return run, nil
}

// startContainerd starts containerd as run says (log <dir>/containerd.log, appended; the node lock
// inherited) and waits until its socket answers.
func startContainerd(ctx context.Context, run containerdRun, lock *os.File, timeout time.Duration) (*Process, error) {
	p, err := startProcess("containerd", filepath.Join(run.dir, "containerd.log"), run.argv, run.env, lock)
	if err != nil {
		return nil, err
	}
	sock := containerdSocket(run.dir)
	err = p.waitReady(ctx, timeout, func(ctx context.Context) error {
		c, err := (&net.Dialer{}).DialContext(ctx, "unix", sock)
		if err != nil {
			return err
		}
		return c.Close()
	})
	return p, err
}

// ctrPath is the ctr of the node's containerd: containerd 2's own, or the one in PATH.
func ctrPath(c *Containerd2) (string, error) {
	if c != nil {
		return filepath.Join(c.Dir, "ctr"), nil
	}
	bin, err := exec.LookPath("ctr")
	if err != nil {
		return "", fmt.Errorf("ctr: %w", err)
	}
	return bin, nil
}

// importImages runs `ctr -n k8s.io images import` for each image tarball.
func importImages(ctx context.Context, c *Containerd2, sock string, imgs []images.Image, logPath string) error {
	bin, err := ctrPath(c)
	if err != nil {
		return err
	}
	for _, img := range imgs {
		cmd := exec.CommandContext(ctx, bin, "--address", sock, "-n", "k8s.io", "images", "import", img.Tarball)
		out, err := cmd.CombinedOutput()
		_ = appendFile(logPath, fmt.Sprintf("$ %s\n%s", strings.Join(cmd.Args, " "), out))
		if err != nil {
			return fmt.Errorf("import image %s from %s: %w: %s", img.Name, img.Tarball, err, out)
		}
	}
	return nil
}

func appendFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = f.WriteString(s)
	return err
}

// installNodeDeps runs hack/install-node-deps.sh when a node program is missing.
func installNodeDeps(ctx context.Context) error {
	missing := false
	for _, b := range []string{"containerd", "ctr", "runc", "iptables", "ip"} {
		if _, err := exec.LookPath(b); err != nil {
			missing = true
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback"} {
		if _, err := os.Stat(filepath.Join("/usr/lib/cni", p)); err != nil {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("install node deps: %w", err)
	}
	repo, err := RepoRoot(wd)
	if err != nil {
		return fmt.Errorf("install node deps: %w", err)
	}
	cmd := exec.CommandContext(ctx, filepath.Join(repo, "hack", "install-node-deps.sh"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("hack/install-node-deps.sh: %w: %s", err, out)
	}
	return nil
}
