#!/usr/bin/env bash
# test-prep.sh: what make test needs before its first test, side by side instead of one after the other:
# - k8s-bins: hack/build-k8s.sh, the pinned Kubernetes binaries and etcd (8.6 min of both cores on a
#   cold machine on 2026-12-06, 14.5 min on a slower one; nothing when built), at the normal priority:
#   it is the longest;
# - lint: make lint (gofmt, go mod tidy, go vet, staticcheck; about 4 min cold with the module downloads,
#   1.5 min warm), under nice so that the Kubernetes build keeps the CPU;
# - helm: hack/install-helm.sh, the pinned helm (built once, outside any test's deadline), under nice;
# - packages: hack/install-node-deps.sh then hack/install-vm-deps.sh (apt-get, one after the other: two
#   apt-get runs cannot hold dpkg's lock at once).
# On a warm machine only lint has work to do. Each job writes to its own log; when a job ends its log is
# printed (module download lines counted, not listed) with its time. The first job to fail stops the
# others and its exit status is the script's: nothing is tested on a half-prepared machine.
set -uo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo" || exit 2
make=${MAKE:-make}
prep_nice=${PREP_NICE:-10}

dir=$(mktemp -d)
declare -A pid_job=() started=()
cleanup() {
	for p in "${!pid_job[@]}"; do
		kill -- "-$p" 2>/dev/null
	done
	rm -rf "$dir"
}
trap cleanup EXIT

# start NAME NICE CMD...: runs CMD in its own process group (so that a failure elsewhere can stop it
# with its children), its output into $dir/NAME.log.
start() {
	local name=$1 niceness=$2
	shift 2
	setsid nice -n "$niceness" "$@" >"$dir/$name.log" 2>&1 </dev/null &
	pid_job[$!]=$name
	started[$name]=$(date +%s)
	echo "test-prep: $name started: ${*: -1}"
}

# show NAME: the job's log without go's module download lines, which it counts.
show() {
	local log=$dir/$1.log downloads
	downloads=$(grep -c '^go: downloading ' "$log")
	grep -v '^go: downloading ' "$log" | sed "s/^/[$1] /"
	if ((downloads > 0)); then
		echo "[$1] ($downloads module downloads)"
	fi
}

# Each job is a bash command line; PREP_<JOB> replaces it (hack/testprep's tests use stand-ins).
start k8s-bins 0 bash -c "${PREP_K8S_BINS:-hack/build-k8s.sh}"
start lint "$prep_nice" bash -c "${PREP_LINT:-"$make" --no-print-directory lint}"
start helm "$prep_nice" bash -c "${PREP_HELM:-hack/install-helm.sh}"
start packages 0 bash -c "${PREP_PACKAGES:-hack/install-node-deps.sh && hack/install-vm-deps.sh >/dev/null}"

while ((${#pid_job[@]} > 0)); do
	done_pid=
	wait -n -p done_pid "${!pid_job[@]}"
	rc=$?
	if [[ -z "$done_pid" ]]; then
		echo "test-prep: wait failed (exit $rc)" >&2
		exit 2
	fi
	name=${pid_job[$done_pid]}
	unset "pid_job[$done_pid]"
	took=$(($(date +%s) - started[$name]))
	show "$name"
	if ((rc != 0)); then
		others=$(printf '%s\n' "${pid_job[@]}" | sort | paste -sd' ')
		echo "test-prep: $name failed (exit $rc) after ${took}s; stopping the others still running or not yet reaped: ${others:-none}" >&2
		exit "$rc"
	fi
	echo "test-prep: $name done in ${took}s"
done
