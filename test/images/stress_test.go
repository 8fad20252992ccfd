package images

import (
	"bufio"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// logLine is one line of the stress log.
type logLine struct {
	T     time.Time `json:"t"`
	Event string    `json:"event"`
	Bytes *int64    `json:"bytes"`
	Count *int      `json:"count"`
	Sum   *int64    `json:"sum"`
	PID   int       `json:"pid"`
}

// proc is a running program from an image, its log lines arriving on lines.
type proc struct {
	cmd   *exec.Cmd
	lines chan logLine
	seen  []logLine
}

func startProgram(t *testing.T, image, entrypoint string, args ...string) *proc {
	t.Helper()
	bin := extractBinary(t, shared.image(t, image), entrypoint)
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s %v: %v", entrypoint, args, err)
	}
	p := &proc{cmd: cmd, lines: make(chan logLine, 1024)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			var l logLine
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("log line %q is not JSON: %v", sc.Text(), err)
				continue
			}
			p.lines <- l
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return p
}

// waitEvent reads log lines until one has the event; it fails after timeout or end of log.
func (p *proc) waitEvent(t *testing.T, event string, timeout time.Duration) logLine {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("log ended before event %q; saw %+v", event, p.seen)
			}
			p.seen = append(p.seen, l)
			if l.Event == event {
				return l
			}
		case <-deadline:
			t.Fatalf("no event %q within %v; saw %+v", event, timeout, p.seen)
		}
	}
}

// exitCode waits up to 30s for the process to exit and returns its exit code.
func (p *proc) exitCode(t *testing.T) int {
	t.Helper()
	timeout := time.AfterFunc(30*time.Second, func() { _ = p.cmd.Process.Kill() })
	defer timeout.Stop()
	for l := range p.lines { // drain so the writer never blocks
		p.seen = append(p.seen, l)
	}
	if !timeout.Stop() {
		t.Fatalf("process did not exit within 30s, killed it; log %+v", p.seen)
	}
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	default:
		t.Fatalf("wait: %v", err)
		return -1
	}
}

func (p *proc) events(name string) []logLine {
	var out []logLine
	for _, l := range p.seen {
		if l.Event == name {
			out = append(out, l)
		}
	}
	return out
}

// statusKiB reads a "VmRSS:"-style field of /proc/<pid>/status in KiB.
func statusKiB(t *testing.T, pid int, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			v, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			if err != nil {
				t.Fatalf("parse %s %q: %v", field, line, err)
			}
			return v
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

func TestStressMemHoldsTargetResidentAndExits3OnSIGTERM(t *testing.T) {
	p := startProgram(t, StressName, "/stress", "mem", "--rate", "0", "--target", "64Mi", "--step", "4Mi")
	got := p.waitEvent(t, "target", 30*time.Second)
	if got.Bytes == nil || *got.Bytes != 64<<20 {
		t.Fatalf("target event = %+v, want bytes %d", got, 64<<20)
	}
	p.waitEvent(t, "hold", 5*time.Second)
	if rss := statusKiB(t, p.cmd.Process.Pid, "VmRSS"); rss < 64<<10 {
		t.Errorf("VmRSS = %d KiB while holding, want at least %d KiB", rss, 64<<10)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t); code != 3 {
		t.Errorf("exit code after SIGTERM = %d, want 3", code)
	}
	if last := p.seen[len(p.seen)-1]; last.Event != "sigterm" {
		t.Errorf("last log line = %+v, want event sigterm", last)
	}
	allocs := p.events("alloc")
	if len(allocs) != 16 {
		t.Fatalf("got %d alloc lines, want 16 (64Mi in 4Mi steps)", len(allocs))
	}
	for i, a := range allocs {
		if want := int64(i+1) * 4 << 20; a.Bytes == nil || *a.Bytes != want {
			t.Errorf("alloc %d = %+v, want bytes %d", i, a, want)
		}
	}
}

func TestStressMemRampFollowsRateWithinFactorTwo(t *testing.T) {
	const rate, target = 32 << 20, 64 << 20 // 2 s ramp
	p := startProgram(t, StressName, "/stress", "mem", "--rate", "32Mi", "--target", "64Mi", "--step", "4Mi", "--hold=false")
	start := p.waitEvent(t, "ramp", 10*time.Second)
	p.waitEvent(t, "target", 30*time.Second)
	if code := p.exitCode(t); code != 0 {
		t.Fatalf("exit code with --hold=false = %d, want 0", code)
	}
	allocs := p.events("alloc")
	last := allocs[len(allocs)-1]
	elapsed := last.T.Sub(start.T)
	want := time.Duration(float64(target) / rate * float64(time.Second))
	if elapsed < want/2 || elapsed > want*2 {
		t.Errorf("ramp to %d bytes took %v by the log, want %v within a factor of 2", target, elapsed, want)
	}
	// the middle of the ramp: bytes logged at half time are within a factor 2 of rate*t
	mid := allocs[len(allocs)/2]
	if at := mid.T.Sub(start.T).Seconds(); at > 0 {
		if got := float64(*mid.Bytes) / at; got < rate/2 || got > rate*2 {
			t.Errorf("alloc %d bytes at %.3fs: %.0f B/s, want %d B/s within a factor of 2", *mid.Bytes, at, got, rate)
		}
	}
}

func TestStressDiskWritesTargetBytesToFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "fill")
	p := startProgram(t, StressName, "/stress", "disk", "--path", path, "--rate", "0", "--target", "10Mi", "--step", "4Mi", "--hold=false")
	if code := p.exitCode(t); code != 0 {
		t.Fatalf("exit code = %d, want 0; log %+v", code, p.seen)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() != 10<<20 {
		t.Errorf("file size = %d, want %d", fi.Size(), 10<<20)
	}
	var got []int64
	for _, w := range p.events("write") {
		got = append(got, *w.Bytes)
	}
	if want := []int64{4 << 20, 8 << 20, 10 << 20}; len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("write bytes = %v, want %v (last step cut to the target)", got, want)
	}
}

func TestStressFilesCreatesCountEmptyFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "files")
	p := startProgram(t, StressName, "/stress", "files", "--path", dir, "--count", "2500", "--hold=false")
	if code := p.exitCode(t); code != 0 {
		t.Fatalf("exit code = %d, want 0; log %+v", code, p.seen)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2500 {
		t.Errorf("%d files, want 2500", len(entries))
	}
	for _, e := range entries[:3] {
		if fi, err := e.Info(); err != nil || fi.Size() != 0 {
			t.Errorf("%s: %v size %d, want an empty file", e.Name(), err, fi.Size())
		}
	}
	var counts []int
	for _, l := range p.events("files") {
		counts = append(counts, *l.Count)
	}
	if len(counts) != 2 || counts[0] != 1000 || counts[1] != 2000 {
		t.Errorf("files events %v, want [1000 2000]", counts)
	}
}

// childrenOf lists the pids whose parent is pid, from /proc/*/stat.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue // exited meanwhile
		}
		rest := string(b[strings.LastIndexByte(string(b), ')')+1:])
		f := strings.Fields(rest) // state ppid ...
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			out = append(out, child)
		}
	}
	return out
}

func TestStressCacheCreatesTheFileAndReadsItTwice(t *testing.T) {
	for _, sparse := range []bool{false, true} {
		t.Run("sparse="+strconv.FormatBool(sparse), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sub", "cached")
			p := startProgram(t, StressName, "/stress", "cache", "--path", path, "--size", "6Mi",
				"--sparse="+strconv.FormatBool(sparse), "--hold=false")
			if code := p.exitCode(t); code != 0 {
				t.Fatalf("exit code = %d, want 0; log %+v", code, p.seen)
			}
			if fi, err := os.Stat(path); err != nil || fi.Size() != 6<<20 {
				t.Fatalf("file %s: %v, want 6Mi", path, err)
			}
			passes := p.events("pass")
			if len(passes) != 2 || *passes[0].Bytes != 6<<20 || *passes[1].Count != 2 {
				t.Errorf("passes %+v, want two of 6Mi", passes)
			}
		})
	}
}

// TestStressThrashTouchesEveryPageOfTheMappedFile checks what the kernel sees: after one pass the whole
// file is mapped in the process (RssFile, besides the binary's few Mi of text), and the logged sum is the
// sum of the file's first byte of every page (a loop whose reads are unused is compiled without them).
func TestStressThrashTouchesEveryPageOfTheMappedFile(t *testing.T) {
	const size = 32 << 20
	path := filepath.Join(t.TempDir(), "mapped")
	p := startProgram(t, StressName, "/stress", "thrash", "--path", path, "--size", "32Mi", "--passes", "2")
	p.waitEvent(t, "hold", 30*time.Second)
	if rss := statusKiB(t, p.cmd.Process.Pid, "RssFile") << 10; rss < size {
		t.Errorf("RssFile after the passes = %dKi, want at least the file's %dKi", rss>>10, size>>10)
	}
	passes := p.events("pass")
	if len(passes) != 2 || *passes[1].Bytes != size {
		t.Fatalf("passes %+v, want two over 32Mi", passes)
	}
	var want int64 // the file repeats a 4Mi block whose byte i is i%251 + 1
	for off := 0; off < size; off += os.Getpagesize() {
		want += int64(off%(4<<20)%251) + 1
	}
	for _, l := range passes {
		if l.Sum == nil || *l.Sum != want {
			t.Errorf("pass %d sum = %v, want %d", *l.Count, l.Sum, want)
		}
	}
}

// TestStressThrashRandomWarmsTheEndThenReadsRandomPages checks the confirmed path's thrasher: two
// warm-up reads of the file's last --warm bytes, then passes of as many page reads as the file has
// pages, each page picked by a generator seeded the same every run (the logged sum is the one the same
// generator gives, so the reads happened and were used).
func TestStressThrashRandomWarmsTheEndThenReadsRandomPages(t *testing.T) {
	const size, warm = 32 << 20, 8 << 20
	path := filepath.Join(t.TempDir(), "mapped")
	p := startProgram(t, StressName, "/stress", "thrash", "--path", path, "--size", "32Mi", "--random", "--warm", "8Mi", "--passes", "2")
	p.waitEvent(t, "hold", 30*time.Second)
	warms := p.events("warm")
	if len(warms) != 2 || *warms[0].Bytes != warm || *warms[1].Count != 2 {
		t.Errorf("warm-ups %+v, want two of 8Mi", warms)
	}
	passes := p.events("pass")
	if len(passes) != 2 || *passes[1].Bytes != size {
		t.Fatalf("passes %+v, want two over 32Mi", passes)
	}
	page := os.Getpagesize()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, l := range passes {
		var want int64 // the file repeats a 4Mi block whose byte i is i%251 + 1
		for range size / page {
			want += int64(rng.IntN(size/page)*page%(4<<20)%251) + 1
		}
		if l.Sum == nil || *l.Sum != want {
			t.Errorf("pass %d sum = %v, want %d", *l.Count, l.Sum, want)
		}
	}
}

func TestStressForkStartsCountChildrenAndKillsThemOnSIGTERM(t *testing.T) {
	p := startProgram(t, StressName, "/stress", "fork", "--count", "5")
	got := p.waitEvent(t, "target", 30*time.Second)
	if got.Count == nil || *got.Count != 5 {
		t.Fatalf("target event = %+v, want count 5", got)
	}
	children := childrenOf(t, p.cmd.Process.Pid)
	if len(children) != 5 {
		t.Fatalf("process %d has children %v, want 5", p.cmd.Process.Pid, children)
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t); code != 3 {
		t.Errorf("exit code after SIGTERM = %d, want 3", code)
	}
	for _, c := range children {
		if _, err := os.Stat("/proc/" + strconv.Itoa(c)); err == nil {
			t.Errorf("child %d still exists after the parent's SIGTERM exit", c)
		}
	}
}

func TestStressSleepExits3OnSIGINT(t *testing.T) {
	p := startProgram(t, StressName, "/stress", "sleep")
	p.waitEvent(t, "hold", 10*time.Second)
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := p.exitCode(t); code != 3 {
		t.Errorf("exit code after SIGINT = %d, want 3", code)
	}
}

func TestStressRejectsBadCommandLinesWithExitCode2(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"no subcommand", nil},
		{"unknown subcommand", []string{"cpu"}},
		{"quantity that does not parse", []string{"mem", "--rate", "fast", "--target", "1Gi"}},
		{"negative quantity", []string{"mem", "--rate", "-1Mi", "--target", "1Gi"}},
		{"quantity beyond int64 bytes", []string{"mem", "--rate", "1Mi", "--target", "9Ei"}},
		{"zero step", []string{"mem", "--rate", "1Mi", "--target", "1Gi", "--step", "0"}},
		{"disk without path", []string{"disk", "--rate", "1Mi", "--target", "1Gi"}},
		{"negative fork count", []string{"fork", "--count", "-1"}},
		{"positional argument", []string{"sleep", "extra"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startProgram(t, StressName, "/stress", tc.args...)
			if code := p.exitCode(t); code != 2 {
				t.Errorf("exit code = %d, want 2", code)
			}
		})
	}
}

func TestPauseExits0OnSIGTERM(t *testing.T) {
	bin := extractBinary(t, shared.image(t, PauseName), "/pause")
	cmd := exec.Command(bin)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// pause prints nothing, so there is no readiness line to wait for, and SigCgt in
	// /proc/<pid>/status is no help: the Go runtime catches SIGTERM from its start and
	// re-raises it until signal.Notify runs. Give the first statement of main time to run.
	time.Sleep(500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("pause after SIGTERM: %v, want exit 0", err)
		}
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("pause did not exit within 10s of SIGTERM")
	}
}
