#!/usr/bin/env bash
# build-apiserver.sh builds the kube-apiserver of an older supported release (the modules under
# test/tools/apiserver, one per minor older than the pinned one: v1.34, v1.35, v1.36) from the Go module proxy, into a cache directory
# keyed by the module's pin, and prints that bin directory on stdout. test/chartcompat installs the
# chart against it. Usage: hack/build-apiserver.sh v1.34 [--check]
#   --check: print the bin directory and exit 0 when it is built, exit 3 when it is not (builds nothing).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
minor="${1:-}"
mod="${repo}/test/tools/apiserver/${minor}"
if [[ -z "${minor}" || ! -f "${mod}/go.mod" ]]; then
	echo "build-apiserver: no module test/tools/apiserver/${minor} (want one of: $(ls "${repo}/test/tools/apiserver" | tr '\n' ' '))" >&2
	exit 2
fi
cache="${PRESSURE_CACHE:-${HOME}/.cache/pressure}"
version="$(awk '$1=="require" && $2=="k8s.io/kubernetes"{print $3}' "${mod}/go.mod")"
pin="$(cat "${mod}/go.mod" "${mod}/go.sum" | sha256sum | cut -c1-12)"
out="${cache}/apiserver-${version}-${pin}/bin"
if [[ -x "${out}/kube-apiserver" ]]; then
	echo "${out}"
	exit 0
fi
if [[ "${2:-}" == --check ]]; then
	echo "build-apiserver: kube-apiserver ${version} is not built (${out})" >&2
	exit 3
fi

mkdir -p "${cache}"
exec 9>"${cache}/apiserver-${version}.lock"
flock 9
if [[ -x "${out}/kube-apiserver" ]]; then
	echo "${out}"
	exit 0
fi
n="${version#v1.}"; n="${n%%.*}"
commit="$(echo "${version}" | sha1sum | cut -c1-40)"
ldflags=""
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
	ldflags+=" -X ${pkg}.gitVersion=${version} -X ${pkg}.gitMajor=1 -X ${pkg}.gitMinor=${n}"
	ldflags+=" -X ${pkg}.gitCommit=${commit} -X ${pkg}.gitTreeState=clean"
done
echo "build-apiserver: building kube-apiserver ${version} (cold: several CPU-minutes)..." >&2
start=$(date +%s)
mkdir -p "${out}.tmp"
(cd "${mod}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags} -s -w" -o "${out}.tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
mkdir -p "${out}"
mv "${out}.tmp/kube-apiserver" "${out}/kube-apiserver"
rmdir "${out}.tmp"
echo "build-apiserver: built kube-apiserver ${version} in $(( $(date +%s) - start ))s" >&2
echo "${out}"
