package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// CgroupRoot is where the guest mounts cgroup2; the tests find it in PRESSURE_CGROUP2_ROOT.
const CgroupRoot = "/sys/fs/cgroup"

// controllers are enabled in the root's cgroup.subtree_control, so child cgroups have their files
// (memory.current, memory.events, pids.current, io.stat, ...). The kubelet needs cpu and cpuset too;
// every other controller the kernel offers is enabled when possible.
var controllers = []string{"memory", "pids", "io", "cpu", "cpuset"}

type mount struct{ source, target, fstype, data string }

var mounts = []mount{
	{"proc", "/proc", "proc", ""},
	{"sysfs", "/sys", "sysfs", ""},
	{"tmpfs", "/tmp", "tmpfs", "mode=1777"},
	{"cgroup2", CgroupRoot, "cgroup2", ""},
}

// setup mounts the filesystems and enables the controllers.
func setup() error {
	for _, m := range mounts {
		if err := os.MkdirAll(m.target, 0o755); err != nil {
			return err
		}
		if err := unix.Mount(m.source, m.target, m.fstype, 0, m.data); err != nil {
			return fmt.Errorf("mount %s on %s: %w", m.fstype, m.target, err)
		}
	}
	ctl := filepath.Join(CgroupRoot, "cgroup.subtree_control")
	for _, c := range controllers {
		if err := writeFile(ctl, "+"+c); err != nil {
			return err
		}
	}
	if b, err := os.ReadFile(filepath.Join(CgroupRoot, "cgroup.controllers")); err == nil {
		for _, c := range strings.Fields(string(b)) {
			_ = writeFile(ctl, "+"+c) // optional ones (hugetlb, misc, rdma)
		}
	}
	return nil
}

func writeFile(path, s string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(s); err != nil {
		f.Close()
		return fmt.Errorf("write %q to %s: %w", s, path, err)
	}
	return f.Close()
}
