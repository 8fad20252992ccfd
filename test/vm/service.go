package vm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Running is a guest started by Start: its background programs run until Stop.
type Running struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	// Console and Output are the host files of ttyS0 (the kernel) and ttyS1 (the programs' output).
	Console, Output string
}

// Start boots the guest like Run but returns once qemu runs: the guest init runs the programs (the
// Background ones are left running) and then keeps the guest up until Stop. files are added to the
// initramfs. With Options.DiskMiB the disk's set-up runs first (its result is in the output like any
// program's).
func (g Guest) Start(initBin string, progs []Program, files []File, opt Options) (*Running, error) {
	if opt.Dir == "" {
		return nil, fmt.Errorf("vm: Options.Dir is empty")
	}
	progs, files, drive, err := g.disk(progs, files, opt)
	if err != nil {
		return nil, err
	}
	cpio := filepath.Join(opt.Dir, "initramfs.cpio")
	if err := writeInitramfs(cpio, initBin, g.Busybox, progs, files); err != nil {
		return nil, fmt.Errorf("write %s: %w", cpio, err)
	}
	r := &Running{Console: filepath.Join(opt.Dir, "console.log"), Output: filepath.Join(opt.Dir, "output.log"),
		done: make(chan struct{})}
	argv := append(g.qemuArgv(cpio, r.Console, r.Output, opt), drive...)
	r.cmd = exec.Command(argv[0], argv[1:]...)
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	log, err := os.Create(filepath.Join(opt.Dir, "qemu.log"))
	if err != nil {
		return nil, err
	}
	r.cmd.Stdout, r.cmd.Stderr = log, log
	if err := r.cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("%w: start qemu: %w", ErrGuest, err)
	}
	go func() {
		r.err = r.cmd.Wait()
		log.Close()
		close(r.done)
	}()
	return r, nil
}

// Exited reports whether qemu has ended, and how.
func (r *Running) Exited() (bool, error) {
	select {
	case <-r.done:
		return true, r.err
	default:
		return false, nil
	}
}

// Stop kills qemu (the guest keeps nothing: its root is the initramfs) and waits for it.
func (r *Running) Stop() error {
	if done, _ := r.Exited(); done {
		return nil
	}
	if err := r.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop guest: %w", err)
	}
	select {
	case <-r.done:
		return nil
	case <-time.After(10 * time.Second):
		return fmt.Errorf("stop guest: qemu pid %d still running 10 s after SIGKILL", r.cmd.Process.Pid)
	}
}

// OutputLines returns the lines of ttyS1 so far that start with prefix.
func (r *Running) OutputLines(prefix string) []string {
	b, err := os.ReadFile(r.Output)
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimRight(sc.Text(), "\r"); strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return out
}

// Tail is the last n lines of ttyS1 and of the kernel console, for error messages.
func (r *Running) Tail(n int) string {
	return "programs (ttyS1):\n" + tail(r.Output, n) + "\nkernel (ttyS0):\n" + tail(r.Console, n)
}

// WithLibraries returns the host binary bin as the guest file guest, plus the shared libraries and the
// dynamic loader it needs (from ldd), each at its host path, so a dynamically linked host program
// (containerd, runc) runs in the guest.
func WithLibraries(bin, guest string) ([]File, error) {
	files := []File{{Guest: guest, Host: bin}}
	out, err := exec.Command("ldd", bin).Output()
	if err != nil {
		// "not a dynamic executable": a static binary needs nothing more.
		return files, nil //nolint:nilerr // ldd fails on static binaries
	}
	for _, l := range strings.Split(string(out), "\n") {
		f := strings.Fields(l)
		var lib string
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			lib = f[2]
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			lib = f[0] // the dynamic loader
		default:
			continue
		}
		files = append(files, File{Guest: lib, Host: lib})
	}
	return files, nil
}
