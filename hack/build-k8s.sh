#!/usr/bin/env bash
# build-k8s.sh builds the pinned Kubernetes binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kubectl) and etcd from the Go module proxy, using the separate tools
# module in test/tools, into a cache directory keyed by the pin:
#   ${PRESSURE_CACHE:-$HOME/.cache/pressure}/k8s-<version>-<hash of test/tools/go.sum>/bin
# It prints that bin directory on stdout. Binaries are rebuilt only when the pin changes.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tools="${repo}/test/tools"
cache="${PRESSURE_CACHE:-${HOME}/.cache/pressure}"
k8s_version="$(awk '$1=="k8s.io/kubernetes"{print $2}' "${tools}/go.mod" | head -n1)"
pin="$(cat "${tools}/go.mod" "${tools}/go.sum" | sha256sum | cut -c1-12)"
out="${cache}/k8s-${k8s_version}-${pin}/bin"
bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl etcd)

log() { echo "build-k8s: $*" >&2; }

missing=()
for b in "${bins[@]}"; do
	[[ -x "${out}/${b}" ]] || missing+=("${b}")
done
if [[ ${#missing[@]} -eq 0 ]]; then
	echo "${out}"
	exit 0
fi

mkdir -p "${out}.tmp"
minor="${k8s_version#v1.}"; minor="${minor%%.*}"
commit="$(echo "${k8s_version}" | sha1sum | cut -c1-40)"
date="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X ${pkg}.gitVersion=${k8s_version}"
	ldflags+=" -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${minor}"
	ldflags+=" -X ${pkg}.gitCommit=${commit} -X ${pkg}.gitTreeState=clean"
	ldflags+=" -X ${pkg}.buildDate=${date}"
done

cd "${tools}"
for b in "${missing[@]}"; do
	start=$(date +%s)
	if [[ "${b}" == etcd ]]; then
		log "building etcd (from go.etcd.io/etcd/server/v3)..."
		CGO_ENABLED=0 go build -trimpath -o "${out}.tmp/etcd" go.etcd.io/etcd/server/v3
	else
		log "building ${b} ${k8s_version} (the first build of Kubernetes takes several minutes)..."
		CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags} -s -w" -o "${out}.tmp/${b}" "k8s.io/kubernetes/cmd/${b}"
	fi
	log "built ${b} in $(( $(date +%s) - start ))s"
done
mkdir -p "${out}"
for b in "${missing[@]}"; do
	mv "${out}.tmp/${b}" "${out}/${b}"
done
rmdir "${out}.tmp" 2>/dev/null || true
echo "${out}"
