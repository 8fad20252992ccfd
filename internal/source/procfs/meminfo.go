package procfs

// /proc/meminfo, documented in https://docs.kernel.org/filesystems/proc.html (section "meminfo").
// Sample lines:
//
//	MemTotal:       24684092 kB
//	HugePages_Total:       0

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/kube-pressure/pressure/internal/source/parse"
)

// Meminfo holds the /proc/meminfo fields pressure uses, converted to bytes (HugePages_* are page counts).
// A nil field was not present in the file: absent is not zero.
type Meminfo struct {
	MemTotal       *uint64
	MemFree        *uint64
	MemAvailable   *uint64
	Buffers        *uint64
	Cached         *uint64
	ActiveFile     *uint64 // Active(file)
	InactiveFile   *uint64 // Inactive(file)
	SwapTotal      *uint64
	SwapFree       *uint64
	Shmem          *uint64
	HugePagesTotal *uint64 // pages, not bytes
	HugePagesFree  *uint64 // pages, not bytes
	Hugepagesize   *uint64
}

// fields maps a meminfo key to the struct field it fills.
func (m *Meminfo) fields() map[string]**uint64 {
	return map[string]**uint64{
		"MemTotal": &m.MemTotal, "MemFree": &m.MemFree, "MemAvailable": &m.MemAvailable,
		"Buffers": &m.Buffers, "Cached": &m.Cached, "Active(file)": &m.ActiveFile,
		"Inactive(file)": &m.InactiveFile, "SwapTotal": &m.SwapTotal, "SwapFree": &m.SwapFree,
		"Shmem": &m.Shmem, "HugePages_Total": &m.HugePagesTotal, "HugePages_Free": &m.HugePagesFree,
		"Hugepagesize": &m.Hugepagesize,
	}
}

// ParseMeminfo parses /proc/meminfo from r; path is used in errors. Unknown keys are skipped, but every
// line must have the shape "Key: value [kB]", and a known key may appear only once.
func ParseMeminfo(r io.Reader, path string) (Meminfo, error) {
	var m Meminfo
	known := m.fields()
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			continue
		}
		key, v, err := parseMeminfoLine(text)
		if err != nil {
			return Meminfo{}, &parse.Error{Path: path, Line: line, Value: text, Err: err}
		}
		dst, ok := known[key]
		if !ok {
			continue
		}
		if *dst != nil {
			return Meminfo{}, &parse.Error{Path: path, Line: line, Value: text,
				Err: fmt.Errorf("duplicate key %q: %w", key, parse.ErrSyntax)}
		}
		*dst = &v
	}
	if err := sc.Err(); err != nil {
		return Meminfo{}, fmt.Errorf("read %s: %w", path, err)
	}
	return m, nil
}

// parseMeminfoLine splits "MemTotal:  123 kB" into the key and the value in bytes.
func parseMeminfoLine(text string) (string, uint64, error) {
	key, rest, ok := strings.Cut(text, ":")
	if !ok || key == "" {
		return "", 0, fmt.Errorf("want \"key: value\": %w", parse.ErrSyntax)
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || len(fields) > 2 {
		return "", 0, fmt.Errorf("want \"value [kB]\": %w", parse.ErrSyntax)
	}
	v, err := parse.Uint(fields[0])
	if err != nil {
		return "", 0, err
	}
	if len(fields) == 1 {
		return key, v, nil
	}
	if fields[1] != "kB" {
		return "", 0, fmt.Errorf("unit %q, want kB: %w", fields[1], parse.ErrSyntax)
	}
	if v > math.MaxUint64/1024 {
		return "", 0, fmt.Errorf("%d kB overflows bytes: %w", v, parse.ErrSyntax)
	}
	return key, v * 1024, nil
}

// Meminfo reads and parses Root/meminfo.
func (r *Reader) Meminfo() (Meminfo, error) {
	return withFile(r, "meminfo", ParseMeminfo)
}

// MemTotal returns MemTotal in bytes, or an error wrapping parse.ErrMissing when the field is absent.
func (r *Reader) MemTotal() (uint64, error) {
	m, err := r.Meminfo()
	if err != nil {
		return 0, err
	}
	if m.MemTotal == nil {
		return 0, &parse.Error{Path: r.path("meminfo"), Value: "MemTotal", Err: parse.ErrMissing}
	}
	return *m.MemTotal, nil
}
