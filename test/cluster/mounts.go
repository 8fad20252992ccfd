package cluster

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// MountsBelow reads /proc/PID/mountinfo and returns the mount points at or below prefix with their
// per-mount options (field 6: "ro,nosuid,..."), as the process sees them (its mount namespace).
func MountsBelow(pid int, prefix string) (map[string]string, error) {
	path := filepath.Join("/proc", strconv.Itoa(pid), "mountinfo")
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 {
			continue
		}
		if target := fields[4]; target == prefix || strings.HasPrefix(target, prefix+"/") {
			out[target] = fields[5]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return out, nil
}

// ReadOnly reports whether per-mount options (MountsBelow's values) hold "ro".
func ReadOnly(opts string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == "ro" {
			return true
		}
	}
	return false
}
