//go:build linux

package cgroupkill

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// signalMembers SIGKILLs the processes of listed that are still members of the cgroup dir (or a
// cgroup below it), without racing PID reuse:
//
//  1. open a pidfd for every listed PID: from then on the pidfd names one process, whatever
//     happens to the number;
//  2. read cgroup.procs again: a PID still listed belongs to a member now;
//  3. signal through the pidfd only the PIDs of step 2. If the pidfd's process had exited between
//     1 and 2 and its PID been reused, the signal finds the pidfd's process gone (ESRCH) and the new
//     holder of the number is not touched; if it is still alive, it held the PID all along, so it is
//     the member step 2 saw.
//
// A PID listed earlier whose number now belongs to a process outside the cgroup is never signalled.
// It returns the PIDs signalled. It needs Linux 5.3 (pidfd_open) and, to see other pods' processes,
// the host's PID namespace.
func signalMembers(dir string, listed []int) ([]int, error) {
	fds := make(map[int]int, len(listed))
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, pid := range listed {
		fd, err := unix.PidfdOpen(pid, 0)
		switch {
		case errors.Is(err, unix.ESRCH):
			continue // exited already
		case err != nil:
			return nil, fmt.Errorf("pidfd_open pid %d of cgroup %s: %w", pid, dir, err)
		}
		fds[pid] = fd
	}
	members, err := CgroupProcs(dir)
	if err != nil {
		return nil, err
	}
	var hit []int
	for _, pid := range members {
		fd, ok := fds[pid]
		if !ok {
			continue // forked since the first read: the next round sees it
		}
		err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		switch {
		case errors.Is(err, unix.ESRCH):
			continue
		case err != nil:
			return hit, fmt.Errorf("kill pid %d of cgroup %s: %w", pid, dir, err)
		}
		hit = append(hit, pid)
	}
	return hit, nil
}
