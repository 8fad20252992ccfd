package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Markers frame each program's output on the output port; test/vm parses them (keep in sync).
const (
	markBegin = "=== pressure-vm begin "
	markEnd   = "=== pressure-vm end "
	markDone  = "=== pressure-vm done"
	markError = "=== pressure-vm error "
	// Background programs (services) report their start and end.
	markStarted = "=== pressure-vm started "
	markExited  = "=== pressure-vm exited "
)

// program mirrors test/vm.Program.
type program struct {
	Name string
	Path string
	Args []string
	Env  []string
	Dir  string
	// Background programs are started and left running (services: containerd, the kubelet); the guest
	// then stays up after the last program until the host stops it.
	Background bool
	// WaitFor is a path that must exist before the program starts (a socket of an earlier service).
	WaitFor string
}

func main() {
	if len(os.Args) == 4 && os.Args[1] == "proxy" {
		proxy(os.Args[2], os.Args[3])
		return
	}
	if len(os.Args) == 3 && os.Args[1] == "cost" {
		period, err := time.ParseDuration(os.Args[2])
		if err != nil {
			fmt.Fprintf(os.Stderr, "guestinit cost: period %q: %v\n", os.Args[2], err)
			os.Exit(2)
		}
		costWatch(period)
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "avail" {
		band, err := strconv.ParseInt(os.Args[3], 10, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "guestinit avail: band %q: %v\n", os.Args[3], err)
			os.Exit(2)
		}
		availWatch(os.Args[2], band)
		return
	}
	out := openOutput()
	if err := setup(); err != nil {
		fmt.Fprintf(out, "%s%v\n", markError, err)
		powerOff()
	}
	progs, err := readManifest("/pressure-vm.json")
	if err != nil {
		fmt.Fprintf(out, "%s%v\n", markError, err)
		powerOff()
	}
	services := false
	for _, p := range progs {
		if p.WaitFor != "" {
			waitFor(out, p.WaitFor, 5*time.Minute)
		}
		if p.Background {
			services = true
			start(out, p)
			continue
		}
		run(out, p)
	}
	fmt.Fprintln(out, markDone)
	if services {
		reapForever(out)
	}
	powerOff()
}

// openOutput opens the second serial port, or falls back to the console.
func openOutput() *os.File {
	_ = os.MkdirAll("/dev", 0o755)
	_ = unix.Mount("devtmpfs", "/dev", "devtmpfs", 0, "")
	f, err := os.OpenFile("/dev/ttyS1", os.O_WRONLY|unix.O_NOCTTY, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, "guestinit: no /dev/ttyS1, test output on the console:", err)
		return os.Stdout
	}
	rawMode(f)
	return f
}

// rawMode turns off the output processing (\n -> \r\n) of the serial line.
func rawMode(f *os.File) {
	t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		return
	}
	t.Oflag &^= unix.OPOST
	_ = unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, t)
}

func readManifest(path string) ([]program, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var progs []program
	if err := json.Unmarshal(b, &progs); err != nil {
		return nil, fmt.Errorf("manifest %s: %w", path, err)
	}
	return progs, nil
}

// run runs one program with stdout and stderr on out and writes its end marker with the exit status
// (-1 when it could not start or was killed by a signal).
func run(out *os.File, p program) {
	fmt.Fprintf(out, "%s%s\n", markBegin, p.Name)
	start := time.Now()
	code := -1
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = p.Env, p.Dir, out, out
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(out, "\nguestinit: %s: %v\n", p.Name, err)
	} else {
		code = reapUntil(cmd.Process.Pid)
	}
	fmt.Fprintf(out, "\n%s%s exit %d after %.2fs\n", markEnd, p.Name, code, time.Since(start).Seconds())
}

// background maps the PIDs of background programs to their names, so their end is reported.
var background = map[int]string{}

// start starts a background program with its output on out.
func start(out *os.File, p program) {
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = p.Env, p.Dir, out, out
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(out, "%s%s: %v\n", markExited, p.Name, err)
		return
	}
	background[cmd.Process.Pid] = p.Name
	fmt.Fprintf(out, "%s%s pid %d\n", markStarted, p.Name, cmd.Process.Pid)
}

// waitFor waits until path exists, at most d.
func waitFor(out *os.File, path string, d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	fmt.Fprintf(out, "guestinit: %s still missing after %s\n", path, d)
}

// reapForever reaps children until the host stops the guest, reporting the end of background programs.
func reapForever(out *os.File) {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			_ = syscall.Pause()
			continue
		}
		if name, ok := background[got]; ok {
			fmt.Fprintf(out, "%s%s status %v\n", markExited, name, ws)
		}
	}
}

// reapUntil waits for any child, as PID 1 must (orphans of the tests are re-parented to it), until pid
// ends, and returns pid's exit status (-1 when a signal ended it).
func reapUntil(pid int) int {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1
		}
		if got != pid {
			if name, ok := background[got]; ok {
				fmt.Fprintf(os.Stderr, "guestinit: background %s ended: %v\n", name, ws)
			}
			continue
		}
		if ws.Exited() {
			return ws.ExitStatus()
		}
		return -1
	}
}

func powerOff() {
	unix.Sync()
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF)
	// PID 1 must not exit (the kernel would panic); wait for the power to go.
	for {
		_ = syscall.Pause()
	}
}
