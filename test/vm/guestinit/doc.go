// Command guestinit is /init of the cgroup v2 guest (package test/vm). It mounts the pseudo
// filesystems and cgroup2, enables the memory, pids and io controllers for child cgroups, runs every
// program listed in /pressure-vm.json with its output on ttyS1, framed by marker lines, and powers the
// guest off. It is built with CGO_ENABLED=0 and runs as PID 1; it never returns.
package main
