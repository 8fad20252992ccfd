package vm

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// ErrMissing reports a prerequisite of the guest that is not on this host; the message says how to get it.
var ErrMissing = errors.New("cgroup v2 guest prerequisite missing")

// Guest names the host files a boot needs.
type Guest struct {
	Qemu    string // qemu-system-x86_64
	Kernel  string // a bzImage with initramfs, 8250 console, cgroup2 memory/pids/io and PSI built in
	Busybox string // a static busybox, the guest's /bin
}

// CacheDir is where hack/install-vm-deps.sh unpacks the kernel and busybox: $PRESSURE_CACHE/vm, by
// default ~/.cache/pressure/vm.
func CacheDir() string {
	c := os.Getenv("PRESSURE_CACHE")
	if c == "" {
		home, _ := os.UserHomeDir()
		c = filepath.Join(home, ".cache", "pressure")
	}
	return filepath.Join(c, "vm")
}

// Find locates qemu (in PATH), the kernel (PRESSURE_VM_KERNEL or <dir>/vmlinuz) and busybox
// (<dir>/busybox). dir "" means CacheDir(). The error wraps ErrMissing and names the set-up command.
func Find(dir string) (Guest, error) {
	if dir == "" {
		dir = CacheDir()
	}
	var g Guest
	var missing []error
	q, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		missing = append(missing, fmt.Errorf("qemu-system-x86_64 not in PATH (apt-get install qemu-system-x86)"))
	}
	g.Qemu = q
	g.Kernel = os.Getenv("PRESSURE_VM_KERNEL")
	if g.Kernel == "" {
		g.Kernel = filepath.Join(dir, "vmlinuz")
	}
	g.Busybox = filepath.Join(dir, "busybox")
	for _, f := range []string{g.Kernel, g.Busybox} {
		if _, err := os.Stat(f); err != nil {
			missing = append(missing, fmt.Errorf("no %s: %w", f, err))
		}
	}
	if len(missing) > 0 {
		return g, fmt.Errorf("%w: %w; run hack/install-vm-deps.sh (as root for qemu)", ErrMissing, errors.Join(missing...))
	}
	return g, nil
}
