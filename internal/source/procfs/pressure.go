package procfs

// Pressure stall information, documented in https://docs.kernel.org/accounting/psi.html.
// /proc/pressure/{cpu,memory,io} and every cgroup2 <resource>.pressure file look like:
//
//	some avg10=0.00 avg60=0.00 avg300=0.00 total=0
//	full avg10=0.00 avg60=0.00 avg300=0.00 total=0
//
// The "full" line is missing from /proc/pressure/cpu before Linux 5.13.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kube-pressure/pressure/internal/signal"
	"github.com/kube-pressure/pressure/internal/source/parse"
)

// PSI is one parsed pressure file. Full is nil when the file has no "full" line.
type PSI struct {
	Some signal.PressureLine
	Full *signal.PressureLine
}

// PSIResources are the resources /proc/pressure reports, in output order.
var PSIResources = [...]string{"cpu", "io", "memory"}

// ParsePSI parses a PSI file from r; path is used in errors. The "some" line is required.
func ParsePSI(r io.Reader, path string) (PSI, error) {
	var out PSI
	var some *signal.PressureLine
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		kind, pl, err := parsePSILine(text)
		if err != nil {
			return PSI{}, &parse.Error{Path: path, Line: line, Value: text, Err: err}
		}
		dst := &some
		if kind == "full" {
			dst = &out.Full
		}
		if *dst != nil {
			return PSI{}, &parse.Error{Path: path, Line: line, Value: text, Err: fmt.Errorf("duplicate %q line: %w", kind, parse.ErrSyntax)}
		}
		*dst = &pl
	}
	if err := sc.Err(); err != nil {
		return PSI{}, fmt.Errorf("read %s: %w", path, err)
	}
	if some == nil {
		return PSI{}, &parse.Error{Path: path, Value: "some", Err: parse.ErrMissing}
	}
	out.Some = *some
	return out, nil
}

// parsePSILine parses "some avg10=0.00 avg60=0.00 avg300=0.00 total=0".
func parsePSILine(text string) (string, signal.PressureLine, error) {
	var pl signal.PressureLine
	f := strings.Fields(text)
	if len(f) != 5 || (f[0] != "some" && f[0] != "full") {
		return "", pl, fmt.Errorf("want \"some|full avg10= avg60= avg300= total=\": %w", parse.ErrSyntax)
	}
	for i, key := range []string{"avg10", "avg60", "avg300"} {
		v, err := psiField(f[i+1], key)
		if err != nil {
			return "", pl, err
		}
		*[]*float64{&pl.Avg10, &pl.Avg60, &pl.Avg300}[i] = v
	}
	k, v, ok := strings.Cut(f[4], "=")
	if !ok || k != "total" {
		return "", pl, fmt.Errorf("field %q, want total=: %w", f[4], parse.ErrSyntax)
	}
	total, err := parse.Uint(v)
	if err != nil {
		return "", pl, err
	}
	pl.Total = total
	return f[0], pl, nil
}

// psiField parses "avg10=1.23" and checks the percentage is within [0, 100].
func psiField(field, key string) (float64, error) {
	k, v, ok := strings.Cut(field, "=")
	if !ok || k != key {
		return 0, fmt.Errorf("field %q, want %s=: %w", field, key, parse.ErrSyntax)
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(x) || x < 0 || x > 100 {
		return 0, fmt.Errorf("%s %q is not a percentage: %w", key, v, parse.ErrSyntax)
	}
	return x, nil
}

// PSI reads Root/pressure/<resource> ("cpu", "io" or "memory").
func (r *Reader) PSI(resource string) (PSI, error) {
	return withFile(r, filepath.Join("pressure", resource), ParsePSI)
}

// Pressure reads every node-wide PSI file that exists, as signal.Pressure records with Scope "node",
// sorted by resource. A kernel without PSI (no pressure directory) yields no records and no error; a
// file that exists but cannot be read or parsed is an error.
func (r *Reader) Pressure(now time.Time) ([]signal.Pressure, error) {
	var out []signal.Pressure
	for _, res := range PSIResources {
		p, err := r.PSI(res)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return out, err
		}
		out = append(out, signal.Pressure{Scope: "node", Resource: res, Some: p.Some, Full: p.Full, Time: now})
	}
	return out, nil
}
