#!/bin/sh
# Captures testdata/cgroupv1-cgroupfs from this host's real cgroup v1 memory controller (run as root):
# the memory root's files as they are, plus a real kubepods tree built for the capture under a temporary
# cgroup, with python3 processes holding anonymous memory in three pods (guaranteed, burstable,
# besteffort). Also captures ../../procfs/testdata/proc-k<kernel> from /proc.
# Usage: sh capture-v1.sh   (from internal/source/cgroupfs/testdata)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mem=/sys/fs/cgroup/memory
tmp=$mem/pressure-capture-$$
out=$here/cgroupv1-cgroupfs
g=11111111-2222-3333-4444-555555555555
b=66666666-7777-8888-9999-aaaaaaaaaaaa
e=bbbbbbbb-cccc-dddd-eeee-ffffffffffff
hog() { # hog <cgroup dir> <MiB>
	sh -c 'echo $$ > "$1/cgroup.procs"; exec python3 -c "import time; b = bytearray($2 << 20); time.sleep(60)"' hog "$1" "$2" &
}
mkdir -p "$tmp/kubepods/burstable/pod$b/ctr" "$tmp/kubepods/besteffort/pod$e/ctr" "$tmp/kubepods/pod$g/ctr"
echo $((1 << 30)) > "$tmp/kubepods/memory.limit_in_bytes"
echo $((64 << 20)) > "$tmp/kubepods/pod$g/memory.limit_in_bytes"
hog "$tmp/kubepods/pod$g/ctr" 16
hog "$tmp/kubepods/burstable/pod$b/ctr" 32
hog "$tmp/kubepods/burstable/pod$b/ctr" 8
hog "$tmp/kubepods/besteffort/pod$e/ctr" 4
sleep 2
rm -rf "$out"
copy() { # copy <src dir> <dst dir>
	mkdir -p "$2"
	for f in memory.usage_in_bytes memory.limit_in_bytes memory.stat cgroup.procs; do cat "$1/$f" > "$2/$f"; done
}
copy "$mem" "$out/memory"
(cd "$tmp" && find kubepods -type d) | while read -r d; do copy "$tmp/$d" "$out/memory/$d"; done
mkdir -p "$out/unified"
cat /sys/fs/cgroup/unified/cgroup.controllers > "$out/unified/cgroup.controllers"
cat /sys/fs/cgroup/unified/memory.pressure > "$out/unified/memory.pressure"
kill $(cat "$tmp"/kubepods/pod$g/ctr/cgroup.procs "$tmp"/kubepods/*/pod*/ctr/cgroup.procs) 2>/dev/null || true
wait || true
find "$tmp" -depth -type d -exec rmdir {} \;
proc=$here/../../procfs/testdata/proc-k$(uname -r | cut -d- -f1)
rm -rf "$proc"; mkdir -p "$proc/sys/kernel" "$proc/pressure"
cat /proc/meminfo > "$proc/meminfo"; cat /proc/loadavg > "$proc/loadavg"
cat /proc/sys/kernel/pid_max > "$proc/sys/kernel/pid_max"; cat /proc/sys/kernel/threads-max > "$proc/sys/kernel/threads-max"
for r in cpu io memory; do cat /proc/pressure/$r > "$proc/pressure/$r"; done
echo "captured $out and $proc on $(uname -r)"
