package vm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Options size the guest.
type Options struct {
	MemoryMiB int // guest RAM; 0 means 1536
	CPUs      int // vCPUs; 0 means 2
	// Dir receives initramfs.cpio, console.log (ttyS0: the kernel) and output.log (ttyS1: the programs).
	Dir string
	// Nice, when > 0, runs qemu under nice -n Nice.
	Nice int
	// Cmdline is appended to the kernel command line.
	Cmdline []string
	// Net gives the guest a virtio NIC on qemu's user-mode network (guest 10.0.2.15, the host's loopback
	// at 10.0.2.2); the guest needs the virtio_net module loaded (NetModules).
	Net bool
	// DiskMiB, when > 0, gives the guest a scratch disk of that many MiB (a sparse raw image in Dir on
	// virtio-blk), formatted and mounted at GuestDisk before the programs run. Its page cache is
	// reclaimable file memory; the initramfs and /tmp are shmem, which a guest without swap cannot reclaim.
	DiskMiB int
}

// Result is what one program did in the guest.
type Result struct {
	Name    string
	Output  string
	Exit    int // -1: could not start or killed by a signal
	Elapsed string
}

// ErrGuest reports a guest that did not run its programs to the end (see console.log in Options.Dir).
var ErrGuest = errors.New("cgroup v2 guest failed")

// kernelCmdline: the console on ttyS0, no v1 hierarchies (so every controller is free for cgroup2),
// PSI on (Debian builds it in; some kernels default it off), reboot on panic (qemu -no-reboot exits).
var kernelCmdline = []string{"console=ttyS0", "quiet", "panic=-1", "psi=1", "cgroup_no_v1=all", "rdinit=/init"}

// Run boots the guest with init and the programs and returns their results in order. It returns an
// error wrapping ErrGuest when qemu fails or the guest ends before its last program (the error holds
// the tail of the kernel console), and ctx's error when ctx ends first (qemu is killed).
func (g Guest) Run(ctx context.Context, initBin string, progs []Program, opt Options) ([]Result, error) {
	if opt.Dir == "" {
		return nil, fmt.Errorf("vm: Options.Dir is empty")
	}
	progs, files, drive, err := g.disk(progs, nil, opt)
	if err != nil {
		return nil, err
	}
	cpio := filepath.Join(opt.Dir, "initramfs.cpio")
	if err := writeInitramfs(cpio, initBin, g.Busybox, progs, files); err != nil {
		return nil, fmt.Errorf("write %s: %w", cpio, err)
	}
	console, output := filepath.Join(opt.Dir, "console.log"), filepath.Join(opt.Dir, "output.log")
	argv := append(g.qemuArgv(cpio, console, output, opt), drive...)
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.WaitDelay = 5 * time.Second
	qout, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return nil, fmt.Errorf("guest did not power off: %w\n%s", ctx.Err(), tail(console, 40))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: qemu: %w: %s\n%s", ErrGuest, err, qout, tail(console, 40))
	}
	b, err := os.ReadFile(output)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGuest, err)
	}
	res, err := parseOutput(string(b))
	if err != nil {
		return res, fmt.Errorf("%w: %w\nkernel console:\n%s", ErrGuest, err, tail(console, 40))
	}
	if drive != nil {
		if res, err = takeDiskSetup(res); err != nil {
			return res, fmt.Errorf("%w\nkernel console:\n%s", err, tail(console, 40))
		}
	}
	return res, nil
}

func (g Guest) qemuArgv(cpio, console, output string, opt Options) []string {
	mem, cpus := opt.MemoryMiB, opt.CPUs
	if mem == 0 {
		mem = 1536
	}
	if cpus == 0 {
		cpus = 2
	}
	argv := []string{g.Qemu,
		"-accel", "tcg,thread=multi", "-machine", "pc", "-cpu", "max",
		"-smp", fmt.Sprint(cpus), "-m", fmt.Sprint(mem),
		"-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none", "-no-reboot",
		"-serial", "file:" + console, "-serial", "file:" + output,
		"-kernel", g.Kernel, "-initrd", cpio,
		"-append", strings.Join(append(append([]string{}, kernelCmdline...), opt.Cmdline...), " "),
	}
	if opt.Net {
		argv = append(argv, "-netdev", "user,id=n0", "-device", "virtio-net-pci,netdev=n0")
	}
	if opt.Nice > 0 {
		argv = append([]string{"nice", "-n", fmt.Sprint(opt.Nice)}, argv...)
	}
	return argv
}

// tail returns the last n lines of a file, for error messages.
func tail(file string, n int) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return fmt.Sprintf("(%v)", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
