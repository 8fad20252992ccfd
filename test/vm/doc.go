// Package vm is the cgroup v2 guest tier: it boots a small Linux guest under qemu (TCG, no KVM needed)
// whose cgroup2 hierarchy has the memory, pids and io controllers, runs static test binaries in it and
// hands their output and exit status back to the host test.
//
// The host's memory controller is on cgroup v1 and must not be moved, so everything that needs a real
// cgroup v2 memory controller (the v2 readers of internal/source/cgroupfs, the PSI trigger, memory.events
// and poll notifiers of internal/notify, cgroup.kill in internal/cgroupkill, explain --local in
// internal/cli, bench/detection -guest) runs in the guest. docs/test-cluster.md describes the tier.
//
// The parts come from Debian packages, unpacked (never installed) by hack/install-vm-deps.sh into
// <cache>/vm: the cloud kernel (vmlinuz) and busybox-static (the guest's sleep, sh and friends); qemu is
// qemu-system-x86 from apt. Find locates them and says how to get what is missing.
//
// A boot is: build the guest init (./test/vm/guestinit) and the test binaries with CGO_ENABLED=0, pack
// them with busybox into an uncompressed newc initramfs (NewInitramfs, written in Go), start qemu with
// the kernel and two serial ports written to files, nothing else (no network; a disk only with
// Options.DiskMiB): ttyS0 carries the kernel console, ttyS1 the test output framed by marker lines. The guest init mounts proc, sys, devtmpfs, a
// tmpfs /tmp and cgroup2 at /sys/fs/cgroup, enables +memory +pids +io for the children, runs each test
// binary with PRESSURE_CGROUP2_ROOT=/sys/fs/cgroup and powers off. Run parses ttyS1 into one Result per
// binary. With Options.DiskMiB the guest also gets a scratch disk (a sparse raw image on virtio-blk,
// formatted by busybox mke2fs and mounted at GuestDisk, named to the tests by PRESSURE_GUEST_DISK): the
// one place in the guest where page cache is reclaimable file memory (the initramfs and /tmp are shmem).
//
// StartNode boots the same guest as a long-running node instead: the pinned kubelet on cgroup v2 with the
// host's containerd 1.6 and runc (packed with their shared libraries), on qemu's user-mode network, registered
// with a control plane on the host; Node.Race runs the OOM race of a stress pod on it (the kubelet alone,
// or with the agent run as a process in the guest).
package vm
