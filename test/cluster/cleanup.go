package cluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// NodeCleanup names everything a node creates outside its processes. Clean removes it; it is
// safe to run more than once and after a crash, and only while no node daemon runs (the caller
// holds the node lock or has stopped the daemons).
type NodeCleanup struct {
	Dir                string `json:"dir"`
	KubeletRootDir     string `json:"kubeletRootDir"`
	ContainerdStateDir string `json:"containerdStateDir"`
	PodLogsDir         string `json:"podLogsDir"`
	Bridge             string `json:"bridge"`
	CNINetwork         string `json:"cniNetwork"`
	PodsCgroup         string `json:"podsCgroup"`
	// APIRoute is the DNAT rule letting pods reach the API server (nil: none installed).
	APIRoute *APIRoute `json:"apiRoute,omitempty"`
}

// Clean kills the container processes (members of the pods cgroups) and the containerd shims
// recorded in the containerd state dir, unmounts everything under the node dir and the CRI
// network namespaces, removes the pods cgroups, the bridge, the libcni cache entries of our
// network, the /var/log/containers links into our pod logs and runc's state of our containers.
func (c NodeCleanup) Clean() error {
	var errs []error
	ids := c.containerIDs()
	c.killContainers()
	c.killShims()
	if err := unmountUnder(c.Dir); err != nil {
		errs = append(errs, err)
	}
	if err := removeNetns(); err != nil {
		errs = append(errs, err)
	}
	if err := c.removeCgroups(); err != nil {
		errs = append(errs, err)
	}
	if c.APIRoute != nil {
		if err := c.APIRoute.Remove(); err != nil {
			errs = append(errs, err)
		}
	}
	if c.Bridge != "" {
		if _, err := net.InterfaceByName(c.Bridge); err == nil {
			if out, err := exec.Command("ip", "link", "del", c.Bridge).CombinedOutput(); err != nil {
				errs = append(errs, fmt.Errorf("delete bridge %s: %w: %s", c.Bridge, err, out))
			}
		}
	}
	c.removeCNICache()
	c.removeContainerLogLinks()
	for _, id := range ids {
		_ = os.RemoveAll(filepath.Join("/run/containerd/runc/k8s.io", id))
	}
	removeDeadSockets("/run/containerd/s")
	for _, f := range []string{"kubelet.sock", "kubelet_internal_checkpoint"} {
		_ = os.Remove(filepath.Join("/var/lib/kubelet/device-plugins", f))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("clean up node in %s: %w", c.Dir, err)
	}
	return nil
}

// taskDir is where containerd 1.6 keeps the bundles (shim.pid, init.pid) of the k8s.io tasks.
func (c NodeCleanup) taskDir() string {
	return filepath.Join(c.ContainerdStateDir, "io.containerd.runtime.v2.task", "k8s.io")
}

func (c NodeCleanup) containerIDs() []string {
	entries, err := os.ReadDir(c.taskDir())
	if err != nil {
		return nil
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		ids = append(ids, e.Name())
	}
	return ids
}

// killContainers SIGKILLs every process in the pods cgroups (memory hierarchy: every
// container's process is there, whatever its QoS class).
func (c NodeCleanup) killContainers() {
	if c.PodsCgroup == "" {
		return
	}
	for range 3 {
		pids := cgroupProcs(filepath.Join("/sys/fs/cgroup/memory", c.PodsCgroup))
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// killShims stops the containerd shims of our tasks: the processes holding the shim socket
// whose address containerd recorded in each task's bundle (containerd 1.6 writes no shim.pid).
func (c NodeCleanup) killShims() {
	inodes := map[string]bool{}
	for _, id := range c.containerIDs() {
		data, err := os.ReadFile(filepath.Join(c.taskDir(), id, "address"))
		if err != nil {
			continue
		}
		sock := strings.TrimPrefix(strings.TrimSpace(string(data)), "unix://")
		for _, ino := range unixSocketInodes(sock) {
			inodes["socket:["+ino+"]"] = true
		}
	}
	pids := pidsHoldingAny(inodes)
	// If the bundles are gone (someone removed the node dir), the shims still name our
	// containerd in their arguments: "-address <our socket>".
	pids = append(pids, shimsOf(filepath.Join(c.Dir, "containerd.sock"))...)
	for _, pid := range pids {
		p := &Process{Name: "containerd-shim", PID: pid}
		p.StartTime, _ = procStartTime(pid)
		_ = p.Stop(5 * time.Second)
	}
}

// shimsOf lists the containerd shims started by the containerd listening on sock: processes
// whose argument list holds "-address" followed by exactly sock.
func shimsOf(sock string) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	want := "\x00-address\x00" + sock + "\x00"
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmdline), want) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// unixSocketInodes returns the inodes of the unix sockets bound to path (/proc/net/unix).
func unixSocketInodes(path string) []string {
	data, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	var inodes []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		// Num RefCount Protocol Flags Type St Inode Path
		if len(f) >= 8 && f[7] == path {
			inodes = append(inodes, f[6])
		}
	}
	return inodes
}

// pidsHoldingAny lists the processes with an open fd whose link is in targets, in PID order.
func pidsHoldingAny(targets map[string]bool) []int {
	if len(targets) == 0 {
		return nil
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", e.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", e.Name(), "fd", fd.Name()))
			if err == nil && targets[link] {
				pids = append(pids, pid)
				break
			}
		}
	}
	sort.Ints(pids)
	return pids
}

// cgroupProcs lists the PIDs in dir and all its descendants.
func cgroupProcs(dir string) []int {
	var pids []int
	_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(filepath.Join(path, "cgroup.procs"))
		if err != nil {
			return nil
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	return pids
}

// removeCgroups removes the pods cgroup tree from every cgroup v1 hierarchy, children first.
func (c NodeCleanup) removeCgroups() error {
	if c.PodsCgroup == "" {
		return nil
	}
	roots, _ := filepath.Glob("/sys/fs/cgroup/*/" + c.PodsCgroup)
	var errs []error
	for _, root := range roots {
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		sort.Slice(dirs, func(i, j int) bool {
			if len(dirs[i]) != len(dirs[j]) {
				return len(dirs[i]) > len(dirs[j])
			}
			return dirs[i] < dirs[j]
		})
		for _, d := range dirs {
			var err error
			for range 20 { // a just-killed task may take a moment to leave
				if err = os.Remove(d); err == nil || errors.Is(err, os.ErrNotExist) {
					err = nil
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("remove cgroup: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// unmountUnder lazily unmounts every mount point at or below dir, deepest first.
func unmountUnder(dir string) error {
	if dir == "" {
		return nil
	}
	points, err := mountPoints()
	if err != nil {
		return err
	}
	prefix := filepath.Clean(dir)
	var mine []string
	for _, p := range points {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			mine = append(mine, p)
		}
	}
	sort.Slice(mine, func(i, j int) bool {
		if len(mine[i]) != len(mine[j]) {
			return len(mine[i]) > len(mine[j])
		}
		return mine[i] < mine[j]
	})
	var errs []error
	for _, p := range mine {
		if err := unix.Unmount(p, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmount %s: %w", p, err))
		}
	}
	return errors.Join(errs...)
}

// mountPoints lists the mount points of this mount namespace (field 5 of mountinfo).
func mountPoints() ([]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	defer f.Close()
	var points []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 {
			points = append(points, unescapeMount(fields[4]))
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mounts: %w", err)
	}
	return points, nil
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// removeNetns removes the network namespaces containerd's CRI created (/run/netns/cni-*).
func removeNetns() error {
	paths, _ := filepath.Glob("/run/netns/cni-*")
	var errs []error
	for _, p := range paths {
		_ = unix.Unmount(p, unix.MNT_DETACH)
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove netns: %w", err))
		}
	}
	return errors.Join(errs...)
}

// removeCNICache removes libcni's cached results of our network and of the loopback setup of
// our sandboxes (the path is fixed).
func (c NodeCleanup) removeCNICache() {
	if c.CNINetwork == "" {
		return
	}
	paths, _ := filepath.Glob(filepath.Join("/var/lib/cni/results", c.CNINetwork+"-*"))
	for _, id := range c.containerIDs() {
		more, _ := filepath.Glob(filepath.Join("/var/lib/cni/results", "cni-loopback-"+id+"-*"))
		paths = append(paths, more...)
	}
	for _, p := range paths {
		_ = os.Remove(p)
	}
}

// removeContainerLogLinks removes /var/log/containers links that point into our pod logs dir.
func (c NodeCleanup) removeContainerLogLinks() {
	if c.PodLogsDir == "" {
		return
	}
	entries, err := os.ReadDir("/var/log/containers")
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join("/var/log/containers", e.Name())
		target, err := os.Readlink(p)
		if err == nil && strings.HasPrefix(target, c.PodLogsDir+"/") {
			_ = os.Remove(p)
		}
	}
}

// removeDeadSockets removes unix sockets in dir nobody listens on (shim sockets of killed shims).
func removeDeadSockets(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.Type()&os.ModeSocket == 0 {
			continue
		}
		conn, err := net.DialTimeout("unix", p, time.Second)
		if err == nil {
			conn.Close()
			continue
		}
		if errors.Is(err, syscall.ECONNREFUSED) {
			_ = os.Remove(p)
		}
	}
}

func writeLastNode(c NodeCleanup) error {
	data, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encode node cleanup: %w", err)
	}
	if err := os.WriteFile(lastNodeFile, data, 0o644); err != nil {
		return fmt.Errorf("record node: %w", err)
	}
	return nil
}

// cleanLastNode cleans up after the node recorded in lastNodeFile, if any (a crashed run). The
// caller holds the node lock.
func cleanLastNode() error {
	data, err := os.ReadFile(lastNodeFile)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", lastNodeFile, err)
	}
	var c NodeCleanup
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("read %s: %w", lastNodeFile, err)
	}
	if err := c.Clean(); err != nil {
		return err
	}
	return os.Remove(lastNodeFile)
}

// CleanStaleNode cleans up after a crashed node when no node is running: it takes the node
// lock without waiting and reports running=true (doing nothing) when a node holds it.
func CleanStaleNode(lockPath string) (running bool, err error) {
	if lockPath == "" {
		lockPath = NodeLockPath
	}
	f, ok, err := tryLock(lockPath)
	if err != nil {
		return false, err
	}
	if !ok {
		return true, nil
	}
	defer f.Close()
	return false, cleanLastNode()
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }

// HasMountsUnder reports whether anything is mounted at or below dir (a node that was not
// stopped): such a dir must not be removed, or the node's cleanup data goes with it.
func HasMountsUnder(dir string) bool {
	points, err := mountPoints()
	if err != nil {
		return true
	}
	prefix := filepath.Clean(dir)
	for _, p := range points {
		if p == prefix || strings.HasPrefix(p, prefix+"/") {
			return true
		}
	}
	return false
}
