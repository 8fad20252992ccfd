#!/usr/bin/env bash
# build-containerd.sh builds containerd 2 (containerd, containerd-shim-runc-v2, ctr) from the Go module
# proxy into a cache directory keyed by the version, and prints that bin directory on stdout:
#   ${PRESSURE_CACHE:-$HOME/.cache/pressure}/containerd-<version>/bin
# Debian 12 ships containerd 1.6, which cannot mount a volume recursively read-only; the test node runs
# containerd 2 where a test needs that (test/cluster NodeOptions.Containerd2), with Debian's runc (1.1+:
# `runc features` reports the rro mount option). Built once; a cached build returns at once.
# --check prints the directory and exits 0 when it is built, 3 when it is not, without building.
set -euo pipefail

version="${CONTAINERD2_VERSION:-v2.2.9}"
cache="${PRESSURE_CACHE:-${HOME}/.cache/pressure}"
out="${cache}/containerd-${version}/bin"
bins=(containerd containerd-shim-runc-v2 ctr)

log() { echo "build-containerd: $*" >&2; }

# Two test packages may ask at once (test/cluster, test/e2e): one builds, the other waits for it.
mkdir -p "${cache}"
exec 9>"${cache}/containerd-${version}.lock"
if [[ "${1:-}" != --check ]] && ! flock -n 9; then
	log "another build of containerd ${version} is running: waiting for it"
	flock 9
fi

missing=0
for b in "${bins[@]}"; do
	[[ -x "${out}/${b}" ]] || missing=1
done
if [[ ${missing} == 0 ]]; then
	echo "${out}"
	exit 0
fi
if [[ "${1:-}" == --check ]]; then
	echo "${out}"
	exit 3
fi

tmp="${out}.tmp"
rm -rf "${tmp}"
mkdir -p "${tmp}"
start=$(date +%s)
log "building containerd ${version} (containerd, containerd-shim-runc-v2, ctr) from the Go module proxy: a few minutes the first time..."
# No btrfs, devmapper or zfs snapshotters (cgo and headers this node does not need); static, no cgo.
for b in "${bins[@]}"; do
	CGO_ENABLED=0 GOBIN="${tmp}" GOFLAGS=-mod=mod go install -trimpath \
		-tags 'no_btrfs no_devmapper no_zfs no_cri_dockershim' \
		-ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=${version}" \
		"github.com/containerd/containerd/v2/cmd/${b}@${version}"
done
mkdir -p "${out}"
for b in "${bins[@]}"; do
	mv "${tmp}/${b}" "${out}/${b}"
done
rmdir "${tmp}" 2>/dev/null || true
log "built containerd ${version} in $(( $(date +%s) - start ))s"
echo "${out}"
