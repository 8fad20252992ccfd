#!/bin/sh
# Writes the cgroup v2 fixture trees cgroupv2-systemd and cgroupv2-cgroupfs. This host has no cgroup2
# memory controller, so these are written by hand from the kernel documentation,
# https://docs.kernel.org/admin-guide/cgroup-v2.html (memory.current, memory.max, memory.stat,
# memory.events, PSI files) and https://docs.kernel.org/accounting/psi.html, with the key set of
# memory.stat as a 6.8 kernel prints it. The kubelet's pod cgroup names follow
# pkg/kubelet/cm/cgroup_manager_linux.go (systemd: kubepods-burstable-pod<uid with _>.slice).
# Numbers are chosen so expected results are easy to check by hand; see cgroupfs_test.go.
# Usage: sh make-v2.sh   (from internal/source/cgroupfs/testdata)
set -eu
MiB=1048576
stat() { # stat <dir> <anon> <file> <inactive_file>
	# dirty is file/16, writeback file/32, refaults (pages of 4KiB) file/32KiB, activations half of them
	active=$(($3 - $4)); dirty=$(($3 / 16)); wb=$(($3 / 32)); refault=$(($3 / 32768)); activate=$((refault / 2))
	cat > "$1/memory.stat" <<STAT
anon $2
file $3
kernel 8388608
kernel_stack 1048576
pagetables 2097152
sec_pagetables 0
percpu 524288
sock 0
vmalloc 0
shmem 0
zswap 0
zswapped 0
file_mapped 4194304
file_dirty $dirty
file_writeback $wb
swapcached 0
anon_thp 0
file_thp 0
shmem_thp 0
inactive_anon $2
active_anon 0
inactive_file $4
active_file $active
unevictable 0
slab_reclaimable 1048576
slab_unreclaimable 1048576
slab 2097152
workingset_refault_anon 0
workingset_refault_file $refault
workingset_activate_anon 0
workingset_activate_file $activate
workingset_restore_anon 0
workingset_restore_file 0
workingset_nodereclaim 0
pgscan 0
pgsteal 0
pgscan_kswapd 0
pgscan_direct 0
pgscan_khugepaged 0
pgsteal_kswapd 0
pgsteal_direct 0
pgsteal_khugepaged 0
pgfault 123456
pgmajfault 12
pgrefill 0
pgactivate 0
pgdeactivate 0
pglazyfree 0
pglazyfreed 0
zswpin 0
zswpout 0
zswpwb 0
thp_fault_alloc 0
thp_collapse_alloc 0
thp_swpout 0
thp_swpout_fallback 0
STAT
}
cg() { # cg <dir> <current> <max> <anon> <file> <inactive_file> <pids...>
	d=$1; mkdir -p "$d"
	echo "$2" > "$d/memory.current"; echo "$3" > "$d/memory.max"
	stat "$d" "$4" "$5" "$6"
	printf 'low 0\nhigh 0\nmax 2\noom 0\noom_kill 0\noom_group_kill 0\n' > "$d/memory.events"
	printf 'some avg10=1.50 avg60=0.80 avg300=0.20 total=123456\nfull avg10=0.50 avg60=0.10 avg300=0.00 total=45678\n' > "$d/memory.pressure"
	shift 6; : > "$d/cgroup.procs"
	if [ $# -gt 0 ]; then mkdir -p "$d/ctr"; : > "$d/ctr/cgroup.procs"; for p in "$@"; do echo "$p" >> "$d/ctr/cgroup.procs"; done; fi
}
root() { # root <dir>
	mkdir -p "$1"
	echo "cpuset cpu io memory hugetlb pids rdma misc" > "$1/cgroup.controllers"
	stat "$1" $((1024 * MiB)) $((2048 * MiB)) $((1536 * MiB))
	for r in cpu io memory; do
		printf 'some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n' > "$1/$r.pressure"
	done
	echo "1" > "$1/cgroup.procs"
}
g=11111111-2222-3333-4444-555555555555; b=66666666-7777-8888-9999-aaaaaaaaaaaa; e=bbbbbbbb-cccc-dddd-eeee-ffffffffffff
us() { echo "$1" | tr - _; }

t=cgroupv2-systemd; rm -rf "$t"; root "$t"
cg "$t/kubepods.slice" $((768 * MiB)) $((7168 * MiB)) $((512 * MiB)) $((256 * MiB)) $((256 * MiB))
cg "$t/kubepods.slice/kubepods-pod$(us $g).slice" $((200 * MiB)) $((256 * MiB)) $((150 * MiB)) $((50 * MiB)) $((50 * MiB)) 101 102
mkdir -p "$t/kubepods.slice/kubepods-burstable.slice" "$t/kubepods.slice/kubepods-besteffort.slice"
cg "$t/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod$(us $b).slice" $((300 * MiB)) max $((200 * MiB)) $((100 * MiB)) $((100 * MiB)) 201 202 203
cg "$t/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod$(us $e).slice" $((20 * MiB)) max 0 $((30 * MiB)) $((30 * MiB)) 301
mkdir -p "$t/kubepods.slice/kubepods-burstable.slice/not-a-pod.scope"; : > "$t/kubepods.slice/kubepods-burstable.slice/not-a-pod.scope/cgroup.procs"

t=cgroupv2-cgroupfs; rm -rf "$t"; root "$t"
cg "$t/kubepods" $((768 * MiB)) max $((512 * MiB)) $((256 * MiB)) $((256 * MiB))
cg "$t/kubepods/pod$g" $((200 * MiB)) $((256 * MiB)) $((150 * MiB)) $((50 * MiB)) $((50 * MiB)) 101 102
cg "$t/kubepods/burstable/pod$b" $((300 * MiB)) max $((200 * MiB)) $((100 * MiB)) $((100 * MiB)) 201 202 203
cg "$t/kubepods/besteffort/pod$e" $((20 * MiB)) max 0 $((30 * MiB)) $((30 * MiB)) 301
echo "wrote cgroupv2-systemd and cgroupv2-cgroupfs"
