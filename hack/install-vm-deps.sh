#!/usr/bin/env bash
# install-vm-deps.sh prepares the cgroup v2 guest tier (test/vm): qemu-system-x86 from Debian's apt
# repositories when qemu-system-x86_64 is missing (needs root), and a Linux kernel and a static busybox
# taken from Debian packages without installing them: `apt-get download` + `dpkg -x` into
# ${PRESSURE_CACHE:-$HOME/.cache/pressure}/vm, so the host's /boot and /bin stay untouched. It links
#   <cache>/vm/vmlinuz  -> the kernel of linux-image-cloud-amd64's current dependency (Debian 12: 6.1)
#   <cache>/vm/busybox  -> busybox-static's /bin/busybox
# and prints <cache>/vm. The cloud kernel has everything the guest needs built in (initramfs, 8250
# serial console, cgroup2 with memory, pids and io, PSI, cgroup.kill); the package is unpacked whole, so
# its lib/modules are there for the kubelet node (test/vm.StartNode loads the virtio NIC's modules).
# Idempotent: once both links resolve and qemu is present it prints the directory and exits. Without
# root a missing qemu is reported (and fails under CI=true); the kernel and busybox need no root.
set -euo pipefail

log() { echo "install-vm-deps: $*" >&2; }

cache="${PRESSURE_CACHE:-$HOME/.cache/pressure}/vm"

if ! command -v qemu-system-x86_64 >/dev/null 2>&1; then
	if [[ "$(id -u)" != 0 ]]; then
		log "qemu-system-x86_64 missing and not root: run as root: apt-get install -y --no-install-recommends qemu-system-x86"
		# Outside CI the guest tests skip with this reason; under CI a missing prerequisite fails.
		if [[ "${CI:-}" == true ]]; then exit 1; fi
	else
		log "installing qemu-system-x86 with apt-get..."
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >&2
		apt-get install -y -qq --no-install-recommends qemu-system-x86 >&2
		log "installed qemu-system-x86"
	fi
fi

if [[ -e "${cache}/vmlinuz" && -e "${cache}/busybox" ]]; then
	echo "${cache}"
	exit 0
fi

# unpack PKG DIR: download the candidate .deb of PKG and extract it into DIR (once).
unpack() {
	local pkg="$1" dir="$2" tmp
	if [[ -d "${dir}" ]]; then
		return
	fi
	tmp="$(mktemp -d)"
	chmod 755 "${tmp}" # apt-get download drops privileges to _apt
	(cd "${tmp}" && apt-get download -qq "${pkg}" >&2)
	dpkg -x "${tmp}"/*.deb "${dir}.partial"
	rm -rf "${tmp}"
	mv "${dir}.partial" "${dir}"
}

mkdir -p "${cache}"
kpkg="$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')"
if [[ -z "${kpkg}" ]]; then
	log "apt-cache knows no linux-image-cloud-amd64 (Debian's cloud kernel); run apt-get update, or point PRESSURE_VM_KERNEL at a bzImage"
	exit 1
fi
log "unpacking ${kpkg} and busybox-static into ${cache} (apt-get download + dpkg -x)..."
unpack "${kpkg}" "${cache}/${kpkg}"
unpack busybox-static "${cache}/busybox-static"
kernel="$(ls "${cache}/${kpkg}"/boot/vmlinuz-* | head -n 1)"
ln -sfn "${kernel}" "${cache}/vmlinuz"
ln -sfn "${cache}/busybox-static/bin/busybox" "${cache}/busybox"
log "kernel ${kernel}"
echo "${cache}"
