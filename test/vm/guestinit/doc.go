// Command guestinit is /init of the cgroup v2 guest (package test/vm). It mounts the pseudo
// filesystems and cgroup2, enables the memory, pids, io, cpu and cpuset controllers (and every other one
// the kernel offers) for child cgroups, runs every program listed in /pressure-vm.json with its output on
// ttyS1, framed by marker lines, and powers the guest off. Programs marked Background (services: containerd,
// the kubelet) are started and left running; the guest then stays up, reaping, until the host stops qemu.
// It is built with CGO_ENABLED=0 and runs as PID 1; it never returns.
package main
