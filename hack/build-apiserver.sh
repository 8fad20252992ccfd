#!/usr/bin/env bash
# build-apiserver.sh builds the kube-apiserver (or the kube-scheduler) of an older supported release
# (the modules under test/tools/apiserver and test/tools/scheduler, one per minor older than the pinned one: v1.34, v1.35, v1.36) from the
# Go module proxy, into a cache directory keyed by the module's pin, and prints that bin directory on
# stdout. test/chartcompat installs the chart against the API server; test/avoidwebhook schedules with
# the scheduler. Each component has its own module, so building the scheduler never changes the API
# server's pin. Usage: hack/build-apiserver.sh [kube-apiserver|kube-scheduler] v1.34 [--check]
#   --check: print the bin directory and exit 0 when it is built, exit 3 when it is not (builds nothing).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
component=kube-apiserver
case "${1:-}" in
kube-apiserver | kube-scheduler)
	component="$1"
	shift
	;;
esac
short="${component#kube-}"
minor="${1:-}"
mod="${repo}/test/tools/${short}/${minor}"
if [[ -z "${minor}" || ! -f "${mod}/go.mod" ]]; then
	echo "build-apiserver: no module test/tools/${short}/${minor} (want one of: $(ls "${repo}/test/tools/${short}" | tr '\n' ' '))" >&2
	exit 2
fi
cache="${PRESSURE_CACHE:-${HOME}/.cache/pressure}"
version="$(awk '$1=="require" && $2=="k8s.io/kubernetes"{print $3}' "${mod}/go.mod")"
pin="$(cat "${mod}/go.mod" "${mod}/go.sum" | sha256sum | cut -c1-12)"
out="${cache}/${short}-${version}-${pin}/bin"
if [[ -x "${out}/${component}" ]]; then
	echo "${out}"
	exit 0
fi
if [[ "${2:-}" == --check ]]; then
	echo "build-apiserver: ${component} ${version} is not built (${out})" >&2
	exit 3
fi

mkdir -p "${cache}"
exec 9>"${cache}/${short}-${version}.lock"
flock 9
if [[ -x "${out}/${component}" ]]; then
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
echo "build-apiserver: building ${component} ${version} (cold: several CPU-minutes)..." >&2
start=$(date +%s)
mkdir -p "${out}.tmp"
(cd "${mod}" && CGO_ENABLED=0 go build -trimpath -ldflags "${ldflags} -s -w" -o "${out}.tmp/${component}" "k8s.io/kubernetes/cmd/${component}")
mkdir -p "${out}"
mv "${out}.tmp/${component}" "${out}/${component}"
rmdir "${out}.tmp"
echo "build-apiserver: built ${component} ${version} in $(( $(date +%s) - start ))s" >&2
echo "${out}"
