package cgrouptest

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// V2RootEnv names the root of a cgroup2 hierarchy with the memory controller, set by the cgroup v2
// guest of test/vm. The host's memory controller is on cgroup v1 and must not be touched, so the real
// v2 tests run only where this is set.
const V2RootEnv = "PRESSURE_CGROUP2_ROOT"

// GuestDiskEnv names a directory on a real disk filesystem in the cgroup v2 guest of test/vm (its
// Options.DiskMiB): page cache there is reclaimable file memory, unlike the guest's initramfs and /tmp.
const GuestDiskEnv = "PRESSURE_GUEST_DISK"

// V2Controllers are the controllers MkdirV2 enables on the way down to a new cgroup.
var V2Controllers = []string{"memory", "pids", "io"}

// V2Root returns the cgroup2 root of the guest. Without V2RootEnv it skips: on the host these tests run
// inside the guest, through test/vm (whose own test fails under CI=true when the guest cannot boot).
// With it set, a root that is not a usable cgroup2 hierarchy with the memory controller, or a caller
// that is not root, fails the test: the guest promised one.
func V2Root(t testing.TB) string {
	t.Helper()
	root := os.Getenv(V2RootEnv)
	if root == "" {
		t.Skipf("real cgroup v2 test: %s is unset; it runs in the cgroup v2 guest: go test ./test/vm -run TestGuest", V2RootEnv)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("%s=%s but not root: cannot create cgroups", V2RootEnv, root)
	}
	var st unix.Statfs_t
	if err := unix.Statfs(root, &st); err != nil || st.Type != unix.CGROUP2_SUPER_MAGIC {
		t.Fatalf("%s=%s is not a cgroup2 mount (statfs type %#x, %v)", V2RootEnv, root, st.Type, err)
	}
	b, err := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
	if err != nil || !slices.Contains(strings.Fields(string(b)), "memory") {
		t.Fatalf("%s=%s: memory not enabled in cgroup.subtree_control (%q, %v)", V2RootEnv, root, b, err)
	}
	return root
}

// GuestDisk returns the guest's disk directory for a test that already holds V2Root's root. Unset, the
// test fails: the guest suite that runs it must give the guest a disk (test/vm Options.DiskMiB).
func GuestDisk(t testing.TB) string {
	t.Helper()
	dir := os.Getenv(GuestDiskEnv)
	if dir == "" {
		t.Fatalf("%s is unset: the guest has no disk for reclaimable page cache (test/vm Options.DiskMiB)", GuestDiskEnv)
	}
	return dir
}

// MkdirV2 creates the cgroup root/rel, one level at a time, enabling V2Controllers in the
// cgroup.subtree_control of every level above it so that it has their files; with max > 0 it sets
// memory.max. The levels above must hold no processes (cgroup v2's no-internal-process rule).
func MkdirV2(root, rel string, max int64) error {
	dir := root
	for _, part := range strings.Split(filepath.Clean(rel), "/") {
		if err := enableControllers(dir); err != nil {
			return err
		}
		dir = filepath.Join(dir, part)
		if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
			return err
		}
	}
	if max > 0 {
		return WriteFile(filepath.Join(dir, "memory.max"), strconv.FormatInt(max, 10))
	}
	return nil
}

func enableControllers(dir string) error {
	ctl := filepath.Join(dir, "cgroup.subtree_control")
	for _, c := range V2Controllers {
		if err := WriteFile(ctl, "+"+c); err != nil {
			return fmt.Errorf("enable %s below %s: %w", c, dir, err)
		}
	}
	return nil
}

// NewV2Cgroup creates a fresh cgroup root/<RandomName(prefix)> with the controllers enabled and removes
// it, with everything below it, after the test.
func NewV2Cgroup(t testing.TB, root, prefix string) string {
	t.Helper()
	name := RandomName(prefix)
	if err := MkdirV2(root, name, 0); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, name)
	t.Cleanup(func() {
		if err := Remove(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	return dir
}
