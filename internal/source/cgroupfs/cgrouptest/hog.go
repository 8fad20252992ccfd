package cgrouptest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// HogEnv is set in the environment of a re-executed binary that must run the hog loop.
const HogEnv = "PRESSURE_CGROUPTEST_HOG"

// MonoNow returns CLOCK_MONOTONIC in nanoseconds, comparable across processes on one host.
func MonoNow() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// RampPoint is one step of a ramp: at monotonic time T the hog had touched Bytes bytes.
type RampPoint struct {
	T     int64
	Bytes int64
}

// Hog is a child process that allocates memory on command.
type Hog struct {
	Pid int
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// StartHog re-executes the current binary as a hog and moves it into the cgroup v1 dir (its
// cgroup.procs) before it allocates anything.
func StartHog(dir string) (*Hog, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), HogEnv+"=1")
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &Hog{Pid: cmd.Process.Pid, cmd: cmd, in: in, out: bufio.NewReader(out)}
	if err := WriteFile(filepath.Join(dir, "cgroup.procs"), strconv.Itoa(h.Pid)); err != nil {
		h.Close()
		return nil, err
	}
	if _, err := h.do("ping"); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// do sends one command and returns the reply lines up to "ok".
func (h *Hog) do(cmd string) ([]string, error) {
	if _, err := fmt.Fprintln(h.in, cmd); err != nil {
		return nil, err
	}
	var lines []string
	for {
		l, err := h.out.ReadString('\n')
		if err != nil {
			return lines, fmt.Errorf("hog %q: %w", cmd, err)
		}
		l = strings.TrimSpace(l)
		switch {
		case l == "ok":
			return lines, nil
		case strings.HasPrefix(l, "error "):
			return lines, errors.New(l)
		}
		lines = append(lines, l)
	}
}

// Alloc makes the hog allocate and touch n more bytes.
func (h *Hog) Alloc(n int64) error { _, err := h.do(fmt.Sprintf("alloc %d", n)); return err }

// Free makes the hog release everything it allocated.
func (h *Hog) Free() error { _, err := h.do("free"); return err }

// Ramp makes the hog allocate total bytes at rate bytes/s in chunk-sized steps and returns its log.
func (h *Hog) Ramp(total, rate, chunk int64) ([]RampPoint, error) {
	lines, err := h.do(fmt.Sprintf("ramp %d %d %d", total, rate, chunk))
	if err != nil {
		return nil, err
	}
	pts := make([]RampPoint, 0, len(lines))
	for _, l := range lines {
		var p RampPoint
		if _, err := fmt.Sscanf(l, "%d %d", &p.T, &p.Bytes); err != nil {
			return nil, fmt.Errorf("hog ramp line %q: %w", l, err)
		}
		pts = append(pts, p)
	}
	return pts, nil
}

// Close kills the hog and waits for it.
func (h *Hog) Close() error {
	h.in.Close()
	_ = h.cmd.Process.Kill()
	_ = h.cmd.Wait()
	return nil
}

// RunHogIfRequested runs the hog loop and exits when HogEnv is set; otherwise it returns at once.
func RunHogIfRequested() {
	if os.Getenv(HogEnv) == "" {
		return
	}
	err := hogLoop(os.Stdin, os.Stdout)
	if err != nil && !errors.Is(err, io.EOF) {
		fmt.Fprintln(os.Stderr, "hog:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

func hogLoop(r io.Reader, w io.Writer) error {
	var maps [][]byte
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		var err error
		switch f[0] {
		case "ping":
		case "alloc":
			var m []byte
			m, err = touch(atoi(f, 1))
			maps = append(maps, m)
		case "free":
			for _, m := range maps {
				_ = unix.Munmap(m)
			}
			maps = nil
		case "ramp":
			var ms [][]byte
			ms, err = ramp(w, atoi(f, 1), atoi(f, 2), atoi(f, 3))
			maps = append(maps, ms...)
		default:
			err = fmt.Errorf("unknown command %q", f[0])
		}
		if err != nil {
			fmt.Fprintf(w, "error %v\n", err)
			continue
		}
		fmt.Fprintln(w, "ok")
	}
	return io.EOF
}

func atoi(f []string, i int) int64 {
	if i >= len(f) {
		return 0
	}
	v, _ := strconv.ParseInt(f[i], 10, 64)
	return v
}

// touch maps n bytes of anonymous memory and writes one byte per page so the kernel charges them.
func touch(n int64) ([]byte, error) {
	if n <= 0 {
		return nil, fmt.Errorf("alloc %d bytes", n)
	}
	m, err := unix.Mmap(-1, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	if err != nil {
		return nil, err
	}
	for i := 0; i < len(m); i += 4096 {
		m[i] = 1
	}
	return m, nil
}

// ramp touches total bytes in chunks paced at rate bytes/s and logs "<mono ns> <cumulative bytes>" per
// chunk after the last one (writing during the ramp would perturb its timing).
func ramp(w io.Writer, total, rate, chunk int64) ([][]byte, error) {
	if total <= 0 || rate <= 0 || chunk <= 0 {
		return nil, fmt.Errorf("ramp %d %d %d", total, rate, chunk)
	}
	var maps [][]byte
	pts := make([]RampPoint, 0, total/chunk+1)
	start := MonoNow()
	for done := int64(0); done < total; {
		n := min(chunk, total-done)
		target := start + int64(float64(done)/float64(rate)*1e9)
		if d := target - MonoNow(); d > 0 {
			time.Sleep(time.Duration(d))
		}
		m, err := touch(n)
		if err != nil {
			return maps, err
		}
		maps = append(maps, m)
		done += n
		pts = append(pts, RampPoint{T: MonoNow(), Bytes: done})
	}
	for _, p := range pts {
		fmt.Fprintf(w, "%d %d\n", p.T, p.Bytes)
	}
	return maps, nil
}
