package procfs

// /proc/<pid>/stat and /proc/<pid>/status, documented in https://docs.kernel.org/filesystems/proc.html
// (table 1-4, the stat fields, and table 1-2, the status fields). Sample stat line (the command name is
// in parentheses and may hold spaces and parentheses itself):
//
//	1234 (pressure-agent) S 1 1234 1234 0 -1 4194560 2466 0 0 0 57 12 0 0 20 0 9 0 1726 ...
//
// and status lines:
//
//	VmHWM:	   38412 kB
//	VmRSS:	   36920 kB

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

// UserHZ is the tick of the times in /proc/<pid>/stat (USER_HZ): 100 on every architecture Linux
// exports to user space.
const UserHZ = 100

// ProcessStat is what is read of /proc/<pid>/stat: the command name, the state (R, S, D, Z, ...), the
// CPU time the process used and its start after boot, all times in ticks of UserHZ. The benchmarks
// measure the agent's CPU by it, the test harness tells a process from a successor of the same PID.
type ProcessStat struct {
	Comm, State  string
	UTime, STime uint64
	StartTime    uint64
}

// CPU is the process's user plus system time.
func (s ProcessStat) CPU() time.Duration {
	return time.Duration(s.UTime+s.STime) * time.Second / UserHZ
}

// ParseProcessStat parses /proc/<pid>/stat from r; path is used in errors.
func ParseProcessStat(r io.Reader, path string) (ProcessStat, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return ProcessStat{}, fmt.Errorf("read %s: %w", path, err)
	}
	text := strings.TrimRight(string(b), "\n")
	bad := func(err error) (ProcessStat, error) {
		return ProcessStat{}, &parse.Error{Path: path, Line: 1, Value: text, Err: err}
	}
	open, closing := strings.IndexByte(text, '('), strings.LastIndexByte(text, ')')
	if open < 0 || closing < open {
		return bad(fmt.Errorf("no (command name): %w", parse.ErrSyntax))
	}
	f := strings.Fields(text[closing+1:]) // f[0] is field 3, the state
	if len(f) < 20 {
		return bad(fmt.Errorf("%d fields after the command name, want at least 20: %w", len(f), parse.ErrSyntax))
	}
	s := ProcessStat{Comm: text[open+1 : closing], State: f[0]}
	for _, x := range []struct {
		field int // as proc(5) numbers them: f[0] is field 3
		dst   *uint64
	}{{14, &s.UTime}, {15, &s.STime}, {22, &s.StartTime}} {
		v, err := strconv.ParseUint(f[x.field-3], 10, 64)
		if err != nil {
			return bad(fmt.Errorf("field %d %q: %w", x.field, f[x.field-3], parse.ErrSyntax))
		}
		*x.dst = v
	}
	if s.UTime+s.STime < s.UTime {
		return bad(fmt.Errorf("utime %d + stime %d overflows: %w", s.UTime, s.STime, parse.ErrSyntax))
	}
	return s, nil
}

// ProcessMemory is VmRSS and VmHWM of /proc/<pid>/status, in bytes. Known is false when the file has
// neither (a kernel thread, a zombie): absent is not zero.
type ProcessMemory struct {
	RSS, HWM int64
	Known    bool
}

// ParseProcessStatus parses VmRSS and VmHWM of /proc/<pid>/status from r; path is used in errors. The
// other lines are not parsed.
func ParseProcessStatus(r io.Reader, path string) (ProcessMemory, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return ProcessMemory{}, fmt.Errorf("read %s: %w", path, err)
	}
	var m ProcessMemory
	seen := map[string]bool{}
	for i, line := range bytes.Split(b, []byte("\n")) {
		key, val, ok := strings.Cut(string(line), ":")
		dst := map[string]*int64{"VmRSS": &m.RSS, "VmHWM": &m.HWM}[key]
		if !ok || dst == nil {
			continue
		}
		bad := &parse.Error{Path: path, Line: i + 1, Value: string(line)}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			bad.Err = fmt.Errorf("want \"%s: N kB\": %w", key, parse.ErrSyntax)
			return ProcessMemory{}, bad
		}
		if seen[key] {
			bad.Err = fmt.Errorf("%s repeated: %w", key, parse.ErrSyntax)
			return ProcessMemory{}, bad
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || kb < 0 || kb > 1<<53 {
			bad.Err = fmt.Errorf("%s %q: %w", key, f[0], parse.ErrSyntax)
			return ProcessMemory{}, bad
		}
		seen[key], *dst, m.Known = true, kb<<10, true
	}
	return m, nil
}

// ProcessStat reads /proc/<pid>/stat below the reader's root.
func (r *Reader) ProcessStat(pid int) (ProcessStat, error) {
	return withFile(r, fmt.Sprintf("%d/stat", pid), ParseProcessStat)
}

// ProcessMemory reads VmRSS and VmHWM of /proc/<pid>/status below the reader's root.
func (r *Reader) ProcessMemory(pid int) (ProcessMemory, error) {
	return withFile(r, fmt.Sprintf("%d/status", pid), ParseProcessStatus)
}
