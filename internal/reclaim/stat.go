package reclaim

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Usage is a cgroup's memory as the kernel accounts it, in bytes.
type Usage struct {
	// Usage is memory.usage_in_bytes (v1) or memory.current (v2).
	Usage int64
	// File is the page cache: total_cache (v1) or file (v2).
	File int64
	// Anon is total_rss (v1) or anon (v2).
	Anon int64
	// Unevictable is total_unevictable (v1) or unevictable (v2).
	Unevictable int64
	// ActiveFile and InactiveFile are the file LRU lists.
	ActiveFile, InactiveFile int64
	// Refaults counts refaulted file pages (workingset_refault_file, or workingset_refault on older
	// kernels); a counter, not bytes.
	Refaults int64
}

// statKeys maps our fields to the memory.stat keys of each version, first present wins.
var statKeys = map[Version]struct{ file, anon, unevictable, active, inactive, refault []string }{
	V1: {
		file: []string{"total_cache"}, anon: []string{"total_rss"}, unevictable: []string{"total_unevictable"},
		active: []string{"total_active_file"}, inactive: []string{"total_inactive_file"},
		refault: []string{"total_workingset_refault_file", "total_workingset_refault", "workingset_refault_file", "workingset_refault"},
	},
	V2: {
		file: []string{"file"}, anon: []string{"anon"}, unevictable: []string{"unevictable"},
		active: []string{"active_file"}, inactive: []string{"inactive_file"},
		refault: []string{"workingset_refault_file", "workingset_refault"},
	},
}

// parseStat parses a flat keyed file ("key value" lines), as memory.stat.
func parseStat(b []byte) (map[string]int64, error) {
	m := make(map[string]int64)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d %q: want \"key value\"", n, line)
		}
		v, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("line %d key %q value %q: not a non-negative integer", n, f[0], f[1])
		}
		m[f[0]] = v
	}
	return m, sc.Err()
}

// parseBytes parses a single-number file; "max" (v2) is -1.
func parseBytes(b []byte) (int64, error) {
	s := strings.TrimSpace(string(b))
	if s == "max" {
		return -1, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("value %q: not a non-negative integer", s)
	}
	return v, nil
}

// parseSomeAvg10 returns the avg10 of the "some" line of a PSI file (memory.pressure).
func parseSomeAvg10(b []byte) (float64, error) {
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] != "some" {
			continue
		}
		for _, kv := range f[1:] {
			if v, ok := strings.CutPrefix(kv, "avg10="); ok {
				x, err := strconv.ParseFloat(v, 64)
				if err != nil || x < 0 || x > 100 {
					return 0, fmt.Errorf("some avg10 %q: not a percentage", v)
				}
				return x, nil
			}
		}
		return 0, fmt.Errorf("some line %q: no avg10", line)
	}
	return 0, fmt.Errorf("no some line")
}

func readFile(path string, parse func([]byte) (int64, error)) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := parse(b)
	if err != nil {
		return 0, fmt.Errorf("parse %s: %w", path, err)
	}
	return v, nil
}

// ReadUsage reads the usage and memory.stat of the cgroup dir of version v.
func ReadUsage(dir string, v Version) (Usage, error) {
	usageFile := "memory.usage_in_bytes"
	if v == V2 {
		usageFile = "memory.current"
	}
	var u Usage
	var err error
	if u.Usage, err = readFile(filepath.Join(dir, usageFile), parseBytes); err != nil {
		return Usage{}, fmt.Errorf("read usage: %w", err)
	}
	statPath := filepath.Join(dir, "memory.stat")
	b, err := os.ReadFile(statPath)
	if err != nil {
		return Usage{}, fmt.Errorf("read stat: %w", err)
	}
	m, err := parseStat(b)
	if err != nil {
		return Usage{}, fmt.Errorf("parse %s: %w", statPath, err)
	}
	k := statKeys[v]
	first := func(keys []string) int64 {
		for _, key := range keys {
			if x, ok := m[key]; ok {
				return x
			}
		}
		return 0
	}
	u.File, u.Anon, u.Unevictable = first(k.file), first(k.anon), first(k.unevictable)
	u.ActiveFile, u.InactiveFile, u.Refaults = first(k.active), first(k.inactive), first(k.refault)
	return u, nil
}
