//go:build !linux

package cgroupkill

import (
	"errors"
	"fmt"
)

// errNoPidfd says the cgroup kill needs Linux: pidfds and cgroups exist nowhere else. The agent
// only runs on Linux; this file lets kubectl-pressure, which reads the ledger through this package,
// build for macOS and Windows.
var errNoPidfd = errors.New("the cgroup kill needs linux (pidfd_open)")

func signalMembers(dir string, _ []int) ([]int, error) {
	return nil, fmt.Errorf("kill cgroup %s: %w", dir, errNoPidfd)
}
