package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeletv1beta1 "k8s.io/kubelet/config/v1beta1"

	"github.com/kube-pressure/pressure/test/images"
)

// NodeOptions configure StartNode. Zero values mean the harness default.
type NodeOptions struct {
	// Name is the node name (default "pressure-node").
	Name string
	// Dir holds containerd's root and state, the kubelet root dir, CNI config and logs.
	// Default <control plane dir>/node. Keep it short: containerd's socket lives there.
	Dir string
	// KubeletConfig is merged onto the harness defaults (see DefaultKubeletConfig): every field
	// it sets (non-empty in JSON) wins; nested objects merge key by key.
	KubeletConfig *kubeletv1beta1.KubeletConfiguration
	// Images are imported into containerd's k8s.io namespace. Nil: images.BuildAll into
	// <CacheDir>/images. It must include PauseImage.
	Images []images.Image
	// PauseImage is containerd's sandbox_image (default images.PauseName).
	PauseImage string
	// Subnet is the pod network, a /24 (default 10.213.77.0/24); the bridge takes the first
	// address, which is also the node IP the kubelet serves on.
	Subnet string
	// Bridge is the bridge device name (default "pressure0").
	Bridge string
	// LockPath is the machine-wide lock serializing nodes (default NodeLockPath).
	LockPath string
	// KubeletRootFS, if set, puts the kubelet root dir on a loop-mounted filesystem of its own (nodefs
	// separate from containerd's root, so the image filesystem is dedicated): disk and inode pressure
	// on nodefs are then real and fast to reach, and the host's disk is not touched.
	KubeletRootFS *LoopFS
	// ContainerdRootFS, if set, puts containerd's root (images, their unpacked snapshots and the
	// containers' writable layers: imagefs and containerfs) on a loop-mounted filesystem of its own, so
	// image-filesystem pressure is real and fast to reach.
	ContainerdRootFS *LoopFS
	// Containerd2, if set, runs the node on containerd 2 (BuildContainerd2) instead of the containerd
	// in PATH (Debian's 1.6): the runtime that can mount volumes recursively read-only.
	Containerd2 *Containerd2
	// StartTimeout bounds the wait for containerd and for the node to become Ready (default 2m).
	StartTimeout time.Duration
	// Progress receives the lines of a wait for the node lock: at once (who holds it, how to stop
	// it) and every 30 s (default: stderr, so `go test -v` and hack/cluster.sh show them).
	Progress func(string)
}

// NodeLockPath is the default machine-wide node lock.
const NodeLockPath = "/run/pressure-node.lock"

// lastNodeFile records the cleanup data of the node started last, so the next StartNode or
// `hack/cluster.sh down` can clean up after a crash.
const lastNodeFile = "/run/pressure-node.json"

// Node is a running containerd and kubelet registered with a ControlPlane.
type Node struct {
	cp          *ControlPlane
	name        string
	ip          net.IP
	lock        *os.File
	clean       NodeCleanup
	configPath  string
	containerd  *Process
	containerd2 *Containerd2 // nil: the containerd in PATH
	kubelet     *Process
	// What RestartContainerd and RestartKubelet need: how StartNode ran them, and how long to wait.
	containerdRun containerdRun
	kubeletRun    kubeletRun
	timeout       time.Duration
	mu            sync.Mutex // guards containerd and kubelet while a restart replaces them
}

// StartNode waits for the machine-wide node lock, cleans up leftovers of a crashed node,
// installs missing node packages (hack/install-node-deps.sh), starts containerd, imports the
// images, creates the bridge and CNI config, starts the kubelet and waits for the node to be
// Ready. On error everything it created is removed again.
func StartNode(ctx context.Context, cp *ControlPlane, opts NodeOptions) (_ *Node, err error) {
	if err := opts.defaults(cp); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	n := &Node{cp: cp, name: opts.Name, containerd2: opts.Containerd2}
	began := time.Now()
	if n.lock, err = acquireLock(ctx, opts.LockPath, opts.Progress, lockProgressEvery); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	reportWait("node lock", time.Since(began))
	began = time.Now()
	if err := writeHolder(n.lock, selfHolder(time.Now())); err != nil {
		_ = n.lock.Close()
		return nil, fmt.Errorf("start node: %w", err)
	}
	defer func() {
		if err != nil {
			_ = n.Stop()
		}
	}()
	if err := cleanLastNode(); err != nil {
		return nil, fmt.Errorf("start node: clean up the previous node: %w", err)
	}
	if err := installNodeDeps(ctx); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	if opts.Images == nil {
		if opts.Images, err = images.BuildAll(ctx, filepath.Join(CacheDir(), "images")); err != nil {
			return nil, fmt.Errorf("start node: build images: %w", err)
		}
	}
	_, subnet, err := net.ParseCIDR(opts.Subnet)
	if err != nil {
		return nil, fmt.Errorf("start node: subnet %q: %w", opts.Subnet, err)
	}
	n.ip = gatewayIP(subnet)
	n.clean = NodeCleanup{
		Dir:                opts.Dir,
		KubeletRootDir:     filepath.Join(opts.Dir, "kubelet"),
		ContainerdStateDir: filepath.Join(opts.Dir, "containerd", "state"),
		PodLogsDir:         filepath.Join(opts.Dir, "pod-logs"),
		Bridge:             opts.Bridge,
		CNINetwork:         cniNetworkName,
		PodsCgroup:         podsCgroupName,
	}
	if err := writeLastNode(n.clean); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	if fs := opts.KubeletRootFS; fs != nil {
		if err := fs.mount(ctx, filepath.Join(opts.Dir, "kubelet-fs.img"), n.clean.KubeletRootDir); err != nil {
			return nil, fmt.Errorf("start node: %w", err)
		}
	}
	if fs := opts.ContainerdRootFS; fs != nil {
		if err := fs.mount(ctx, filepath.Join(opts.Dir, "containerd-fs.img"), filepath.Join(opts.Dir, "containerd", "root")); err != nil {
			return nil, fmt.Errorf("start node: %w", err)
		}
	}
	n.timeout = opts.StartTimeout
	if n.containerdRun, err = containerdCommand(opts); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	if n.containerd, err = startContainerd(ctx, n.containerdRun, n.lock, n.timeout); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	if err := importImages(ctx, opts.Containerd2, containerdSocket(opts.Dir), opts.Images, filepath.Join(opts.Dir, "ctr-import.log")); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	route, err := newAPIRoute(opts.Bridge, cp.Server(), cp.serviceRange)
	if err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	n.clean.APIRoute = &route // recorded before it exists: Clean removes it after a crash too
	if err := writeLastNode(n.clean); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	if err := setupNetwork(opts, subnet, n.ip); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	if err := route.Install(); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	if n.configPath, err = writeKubeletFiles(cp, opts, n.ip); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	if n.kubeletRun, err = kubeletCommand(cp, opts, n.ip, n.configPath); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	if n.kubelet, err = startKubelet(ctx, cp, n.kubeletRun, n.lock, n.timeout); err != nil {
		return nil, fmt.Errorf("start node: %w", err)
	}
	reportWait("node start", time.Since(began))
	return n, nil
}

func (o *NodeOptions) defaults(cp *ControlPlane) error {
	if o.Name == "" {
		o.Name = "pressure-node"
	}
	if o.Dir == "" {
		o.Dir = filepath.Join(cp.Dir(), "node")
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return err
	}
	o.Dir = dir
	if len(containerdSocket(o.Dir)) > 100 {
		return fmt.Errorf("node dir %s too long for a unix socket path", o.Dir)
	}
	if o.PauseImage == "" {
		o.PauseImage = images.PauseName
	}
	if o.Subnet == "" {
		o.Subnet = "10.213.77.0/24"
	}
	if o.Bridge == "" {
		o.Bridge = "pressure0"
	}
	if o.LockPath == "" {
		o.LockPath = NodeLockPath
	}
	if o.Progress == nil {
		o.Progress = func(s string) { fmt.Fprintln(os.Stderr, "cluster:", s) }
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = 2 * time.Minute
	}
	return os.MkdirAll(o.Dir, 0o755)
}

// Name is the node name.
func (n *Node) Name() string { return n.name }

// IP is the node's InternalIP: the bridge gateway address the kubelet serves on.
func (n *Node) IP() net.IP { return n.ip }

// KubeletConfigPath is the merged KubeletConfiguration file the kubelet runs with.
func (n *Node) KubeletConfigPath() string { return n.configPath }

// KubeletRootDir is the kubelet's --root-dir.
func (n *Node) KubeletRootDir() string { return n.clean.KubeletRootDir }

// PodLogsDir is the kubelet's podLogsDir.
func (n *Node) PodLogsDir() string { return n.clean.PodLogsDir }

// ContainerdRoot is containerd's root directory (the image filesystem).
func (n *Node) ContainerdRoot() string { return filepath.Join(n.clean.Dir, "containerd", "root") }

// ImportImage imports an OCI image tarball into the node's containerd (namespace k8s.io), unpacked.
func (n *Node) ImportImage(ctx context.Context, name, tarball string) error {
	return importImages(ctx, n.containerd2, n.ContainerdSocket(), []images.Image{{Name: name, Tarball: tarball}},
		filepath.Join(n.clean.Dir, "ctr-import.log"))
}

// ContainerdSocket is the path of containerd's gRPC socket (for ctr --address or crictl).
func (n *Node) ContainerdSocket() string { return containerdSocket(n.clean.Dir) }

// PodsCgroup is the kubelet's pods cgroup name relative to each hierarchy root ("kubepods").
func (n *Node) PodsCgroup() string { return n.clean.PodsCgroup }

// ImportImages imports more image tarballs into the node's containerd (namespace k8s.io), e.g.
// images built after the node started.
func (n *Node) ImportImages(ctx context.Context, imgs []images.Image) error {
	return importImages(ctx, n.containerd2, n.ContainerdSocket(), imgs, filepath.Join(n.clean.Dir, "ctr-import.log"))
}

// PodsMemoryCgroupDir is the pods cgroup in the cgroup v1 memory hierarchy,
// /sys/fs/cgroup/memory/kubepods, whose limit is node allocatable memory.
func (n *Node) PodsMemoryCgroupDir() string {
	return filepath.Join("/sys/fs/cgroup/memory", n.clean.PodsCgroup)
}

// Cleanup is what Stop (or State.Down) removes.
func (n *Node) Cleanup() NodeCleanup { return n.clean }

// Processes lists containerd and kubelet, in start order.
func (n *Node) Processes() []*Process {
	n.mu.Lock()
	defer n.mu.Unlock()
	var ps []*Process
	for _, p := range []*Process{n.containerd, n.kubelet} {
		if p != nil {
			ps = append(ps, p)
		}
	}
	return ps
}

// Stop stops the kubelet and containerd (by PID), kills what runs in the pods cgroups and the
// containerd shims, removes mounts, cgroups, the bridge and CNI state, deletes the Node object
// and releases the lock. The node dir (logs) stays.
func (n *Node) Stop() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	var errs []error
	if err := stopAll(n.kubelet, n.containerd); err != nil {
		errs = append(errs, err)
	}
	if n.clean.Dir != "" {
		if err := n.clean.Clean(); err != nil {
			errs = append(errs, err)
		}
		_ = os.Remove(lastNodeFile)
	}
	if n.kubelet != nil && n.cp.apiserver.Alive() {
		if err := n.deleteNodeObject(); err != nil {
			errs = append(errs, err)
		}
	}
	if n.lock != nil {
		_ = n.lock.Close()
		n.lock = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stop node %s: %w", n.name, err)
	}
	return nil
}

func (n *Node) deleteNodeObject() error {
	client, err := n.cp.Client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = client.CoreV1().Nodes().Delete(ctx, n.name, metav1.DeleteOptions{})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("delete node object: %w", err)
	}
	return nil
}

// gatewayIP is the first address of subnet.
func gatewayIP(subnet *net.IPNet) net.IP {
	ip := make(net.IP, len(subnet.IP.To4()))
	copy(ip, subnet.IP.To4())
	ip[3]++
	return ip
}

// markDetached records in the lock file that a detached cluster in stateDir holds the node lock
// through its kubelet (which inherited the lock's descriptor) until it is taken down.
func (n *Node) markDetached(stateDir string) error {
	if n.kubelet == nil {
		return errors.New("mark detached node: no kubelet")
	}
	env := ""
	if stateDir != DefaultStateDir() {
		env = "PRESSURE_STATE=" + stateDir + " "
	}
	return writeHolder(n.lock, LockHolder{PID: n.kubelet.PID, StartTime: n.kubelet.StartTime,
		Command: "kubelet of the detached cluster (hack/cluster.sh up, make demo)", Since: time.Now().UTC(),
		Detached: true, StateDir: stateDir,
		Stop: "stop it with `" + env + "make demo-down` (hack/cluster.sh down)"})
}

// LoopFS is a small filesystem the harness creates for a node directory, so that disk and inode
// pressure are real and fast to reach: an image file of Size bytes in the node dir, formatted ext4
// (with Inodes inodes when set) and loop-mounted (mount -o loop: the loop device is released when it is
// unmounted, also by the node's cleanup, which unmounts everything below the node dir).
type LoopFS struct {
	// Size is the image size in bytes (at least 16 MiB).
	Size int64
	// Inodes is the inode count of the filesystem (mkfs.ext4 -N); 0: mkfs.ext4's default.
	Inodes int
}

// mount creates the image file img, formats it and mounts it on dir.
func (l LoopFS) mount(ctx context.Context, img, dir string) error {
	if l.Size < 16<<20 {
		return fmt.Errorf("loop filesystem for %s: size %d bytes, want at least 16 MiB", dir, l.Size)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(img)
	if err != nil {
		return err
	}
	err = f.Truncate(l.Size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("loop filesystem image %s: %w", img, err)
	}
	args := []string{"-q", "-F", "-m", "0"} // no blocks reserved for root: f_bavail is the free space
	if l.Inodes > 0 {
		args = append(args, "-N", strconv.Itoa(l.Inodes))
	}
	if out, err := exec.CommandContext(ctx, "mkfs.ext4", append(args, img)...).CombinedOutput(); err != nil {
		return fmt.Errorf("mkfs.ext4 %s: %w: %s", img, err, out)
	}
	if out, err := exec.CommandContext(ctx, "mount", "-o", "loop", img, dir).CombinedOutput(); err != nil {
		return fmt.Errorf("mount -o loop %s %s: %w: %s", img, dir, err, out)
	}
	return nil
}
