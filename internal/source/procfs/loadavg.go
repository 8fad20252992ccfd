package procfs

// /proc/loadavg, documented in https://docs.kernel.org/filesystems/proc.html (section 1.8 "loadavg").
// Sample line (1, 5, 15 minute load, runnable/total scheduling entities, last PID):
//
//	4.39 2.30 0.93 8/140 11379

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

// Loadavg is /proc/loadavg. Tasks counts every thread on the node; it is what the kubelet uses as the
// current number of processes for pid.available.
type Loadavg struct {
	Load1, Load5, Load15 float64
	Runnable             uint64
	Tasks                uint64
	LastPID              uint64
}

// ParseLoadavg parses /proc/loadavg from r; path is used in errors.
func ParseLoadavg(r io.Reader, path string) (Loadavg, error) {
	text, err := parse.SingleValue(r, path)
	if err != nil {
		return Loadavg{}, err
	}
	bad := func(err error) (Loadavg, error) {
		return Loadavg{}, &parse.Error{Path: path, Line: 1, Value: text, Err: err}
	}
	f := strings.Fields(text)
	if len(f) != 5 {
		return bad(fmt.Errorf("%d fields, want 5: %w", len(f), parse.ErrSyntax))
	}
	var l Loadavg
	for i, dst := range []*float64{&l.Load1, &l.Load5, &l.Load15} {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return bad(fmt.Errorf("load field %d %q: %w", i+1, f[i], parse.ErrSyntax))
		}
		*dst = v
	}
	run, tasks, ok := strings.Cut(f[3], "/")
	if !ok {
		return bad(fmt.Errorf("field 4 %q, want runnable/total: %w", f[3], parse.ErrSyntax))
	}
	if l.Runnable, err = parse.Uint(run); err != nil {
		return bad(err)
	}
	if l.Tasks, err = parse.Uint(tasks); err != nil {
		return bad(err)
	}
	if l.LastPID, err = parse.Uint(f[4]); err != nil {
		return bad(err)
	}
	return l, nil
}

// Loadavg reads and parses Root/loadavg.
func (r *Reader) Loadavg() (Loadavg, error) {
	return withFile(r, "loadavg", ParseLoadavg)
}
