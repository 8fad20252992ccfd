package cgroupfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// DefaultRoot is where the cgroup filesystems are mounted on a normal host.
const DefaultRoot = "/sys/fs/cgroup"

// Version is the cgroup version whose memory controller pressure reads.
type Version int

// Cgroup versions.
const (
	V1 Version = 1
	V2 Version = 2
)

// Driver is the kubelet's cgroup driver, which decides how the pods cgroups are named.
type Driver string

// Cgroup drivers. DriverNone means no pods cgroup was found (not a Kubernetes node, or kubelet without
// cgroups-per-qos).
const (
	DriverCgroupfs Driver = "cgroupfs" // kubepods/burstable/pod<uid>
	DriverSystemd  Driver = "systemd"  // kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice
	DriverNone     Driver = ""
)

// Magic numbers of statfs(2) f_type, from linux/magic.h.
const (
	Cgroup2SuperMagic = unix.CGROUP2_SUPER_MAGIC
	CgroupSuperMagic  = unix.CGROUP_SUPER_MAGIC
	TmpfsMagic        = unix.TMPFS_MAGIC
)

// ErrNoMemoryController reports a cgroup tree without a usable memory controller.
var ErrNoMemoryController = errors.New("no memory controller")

// Layout says where things are in a cgroup tree. Paths are absolute (they include the root).
type Layout struct {
	Version Version
	// Memory is the root of the hierarchy holding the memory controller: <root>/memory on v1, <root> on v2.
	Memory string
	// Unified is the root of a cgroup2 hierarchy (for PSI files), or "" when there is none.
	// On a hybrid host it is <root>/unified, which may lack the memory controller.
	Unified string
	// UnifiedHasMemory reports whether the cgroup2 hierarchy has the memory controller.
	UnifiedHasMemory bool
	// Driver and PodsCgroup ("kubepods" or "kubepods.slice", relative to Memory) name the pods cgroup.
	Driver     Driver
	PodsCgroup string
}

// String describes the layout for logs and the CLI.
func (l Layout) String() string {
	s := fmt.Sprintf("cgroup v%d memory at %s", l.Version, l.Memory)
	if l.Unified != "" {
		s += fmt.Sprintf(", cgroup2 at %s (memory controller: %t)", l.Unified, l.UnifiedHasMemory)
	}
	if l.Driver == DriverNone {
		return s + ", no pods cgroup"
	}
	return s + fmt.Sprintf(", driver %s (%s)", l.Driver, l.PodsCgroup)
}

// Detector finds the Layout of a cgroup tree rooted at Root.
type Detector struct {
	Root string
	// Magic returns the statfs f_type of a path. Nil means statfs(2); tests pass a fake or a func
	// returning an error, in which case detection relies on the files present.
	Magic func(path string) (int64, error)
}

// Detect finds the cgroup version, the memory and cgroup2 hierarchies, and the kubelet's driver.
//
// A root whose statfs magic is CGROUP2_SUPER_MAGIC is unified (v2). Otherwise a <root>/memory directory
// holding memory.usage_in_bytes is v1, with <root>/unified as the cgroup2 hierarchy if it exists. A root
// that is not a cgroup2 mount but holds cgroup.controllers listing "memory" (a fixture tree) is v2.
func (d Detector) Detect() (Layout, error) {
	root := d.Root
	if root == "" {
		root = DefaultRoot
	}
	var l Layout
	switch {
	case d.magic(root) == Cgroup2SuperMagic || hasController(root, "memory"):
		l = Layout{Version: V2, Memory: root, Unified: root, UnifiedHasMemory: hasController(root, "memory")}
	case exists(filepath.Join(root, "memory", "memory.usage_in_bytes")):
		l = Layout{Version: V1, Memory: filepath.Join(root, "memory")}
		if u := filepath.Join(root, "unified"); exists(filepath.Join(u, "cgroup.controllers")) {
			l.Unified, l.UnifiedHasMemory = u, hasController(u, "memory")
		}
	default:
		return Layout{}, fmt.Errorf("detect cgroup layout at %s: %w", root, ErrNoMemoryController)
	}
	if l.Version == V2 && !l.UnifiedHasMemory {
		return Layout{}, fmt.Errorf("detect cgroup layout at %s: cgroup2 without memory in cgroup.controllers: %w", root, ErrNoMemoryController)
	}
	l.Driver, l.PodsCgroup = detectDriver(l.Memory)
	return l, nil
}

func (d Detector) magic(path string) int64 {
	f := d.Magic
	if f == nil {
		f = StatfsMagic
	}
	m, err := f(path)
	if err != nil {
		return 0
	}
	return m
}

// StatfsMagic returns the f_type of the filesystem holding path.
func StatfsMagic(path string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: path, Err: err}
	}
	return int64(st.Type), nil
}

// detectDriver looks for the pods cgroup: kubepods.slice (systemd) wins over kubepods (cgroupfs).
func detectDriver(memory string) (Driver, string) {
	switch {
	case isDir(filepath.Join(memory, "kubepods.slice")):
		return DriverSystemd, "kubepods.slice"
	case isDir(filepath.Join(memory, "kubepods")):
		return DriverCgroupfs, "kubepods"
	}
	return DriverNone, ""
}

// hasController reports whether dir/cgroup.controllers lists name.
func hasController(dir, name string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return false
	}
	for _, c := range strings.Fields(string(b)) {
		if c == name {
			return true
		}
	}
	return false
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

func isDir(p string) bool { fi, err := os.Stat(p); return err == nil && fi.IsDir() }
