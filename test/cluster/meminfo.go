package cluster

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// MemTotal reads MemTotal (bytes) from a /proc/meminfo document.
func MemTotal(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("MemTotal %q: %w", f[1], err)
			}
			return kb << 10, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no MemTotal line")
}

// HostMemTotal is this machine's MemTotal in bytes (/proc/meminfo): the level-2 node's memory, from
// which a test derives kubeReserved for the pods cgroup limit it wants.
func HostMemTotal() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("read meminfo: %w", err)
	}
	defer f.Close()
	n, err := MemTotal(f)
	if err != nil {
		return 0, fmt.Errorf("/proc/meminfo: %w", err)
	}
	return n, nil
}
