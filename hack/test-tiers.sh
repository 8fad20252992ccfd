#!/usr/bin/env bash
# test-tiers.sh TESTTABLE: make test's lanes, side by side, and the guest's thrash case alone at the end.
# - the race lane: internal/... and cmd/... with -race, one package at a time, under nice (RACE_NICE,
#   default 5), so that the real node's OOM races keep the CPU they had when the tiers ran one after
#   the other; once it is done, the same lane runs the cgroup v2 guest (test/vm/...) but for the tests
#   in ALONE. The guest needs no node lock; its qemu and builds run under nice 15 (the tests set it).
# - the rest of ./... without -race: the API-server, real-node and e2e packages. The real-node ones take
#   turns on the node lock, which bounds the run (about 45 min warm of node time with the short soak).
# - last, when both lanes are done: test/vm's tests in ALONE (default: the thrash case), with the
#   machine to themselves. Beside the node's chain the guest's other cases pass, slower (8a2d76a: 30.7
#   min against 14), but the thrash case saw no eviction: its thrasher refaults too slowly on a starved
#   guest for its working set to cross the threshold (docs/test-cluster.md, "The guest in the race lane").
#   Before this split the whole guest ran last, behind test/deploy's go test slot held for 27 min
#   waiting for the node lock: 12 to 14 min after the node's chain.
# Each lane writes go test -json into its own FIFO; TESTTABLE merges them as they come (a package's two
# runs never overlap: the last one starts after the guest lane ends), prints what plain go test would and
# ends with the table of each package's wall time. The merged events are kept in TEST_RUNS (default
# ~/.cache/pressure/test-runs; the last 5 runs) to read again: testtable -slowest 0 FILE lists every
# test's time. The exit status is the first lane's that failed (else the table's).
set -uo pipefail

table=${1:?usage: test-tiers.sh TESTTABLE}
go=${GO:-go}
timeout=${TEST_TIMEOUT:-75m}
race_nice=${RACE_NICE:-5}
alone=${ALONE:-TestKubeletOnCgroupV2ReclaimRungEvictsTheThrasher}
runs=${TEST_RUNS:-${PRESSURE_CACHE:-$HOME/.cache/pressure}/test-runs}
root=$(cd "$(dirname "$0")/.." && pwd)
module=$($go list -m) || exit 2
all_pkgs=$($go list ./...) || {
	echo "test-tiers: go list ./... failed" >&2
	exit 2
}
rest_pkgs=$(grep -v -e "^$module/internal/" -e "^$module/cmd/" -e "^$module/test/vm\(/\|$\)" <<<"$all_pkgs")
vm_pkgs=$(grep -e "^$module/test/vm\(/\|$\)" <<<"$all_pkgs")
# A renamed test would leave -run matching nothing and -skip skipping nothing, silently: each name must
# be a test function of test/vm.
alone_re=
for name in $alone; do
	if ! grep -q "^func $name(t \*testing.T)" "$root"/test/vm/*_test.go; then
		echo "test-tiers: ALONE names $name, which is no test function in test/vm/*_test.go" >&2
		exit 2
	fi
	alone_re+="${alone_re:+|}$name"
done
alone_re="^($alone_re)\$"

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/race" "$dir/rest" "$dir/vm" "$dir/alone"

echo "race lane: nice -n $race_nice $go test -json -race -p 1 -count=1 -timeout $timeout ./internal/... ./cmd/..."
echo "           then $go test -json -count=1 -timeout $timeout -skip '$alone_re' ./test/vm/..."
(
	nice -n "$race_nice" "$go" test -json -race -p 1 -count=1 -timeout "$timeout" ./internal/... ./cmd/... >"$dir/race" &
	race=$!
	exec 3>"$dir/vm" # opened now: TESTTABLE opens its inputs in order, before it reads any
	rc=0
	wait "$race" || rc=$?
	echo "$rc" >"$dir/race.rc"
	rc=0
	# shellcheck disable=SC2086 # one word per package
	"$go" test -json -count=1 -timeout "$timeout" -skip "$alone_re" $vm_pkgs >&3 || rc=$?
	echo "$rc" >"$dir/vm.rc"
) &
lane=$!
echo "rest: $go test -json -count=1 -timeout $timeout (every other package)"
(
	rc=0
	# shellcheck disable=SC2086 # one word per package
	"$go" test -json -count=1 -timeout "$timeout" $rest_pkgs >"$dir/rest" || rc=$?
	echo "$rc" >"$dir/rest.rc"
) &
rest=$!
echo "last, alone: $go test -json -count=1 -timeout $timeout -run '$alone_re' ./test/vm"
(
	exec 3>"$dir/alone"
	while [[ ! -e "$dir/vm.rc" || ! -e "$dir/rest.rc" ]]; do
		sleep 2
	done
	echo "test-tiers: both lanes are done; test/vm's $alone runs alone" >&2
	rc=0
	"$go" test -json -count=1 -timeout "$timeout" -run "$alone_re" "$module/test/vm" >&3 || rc=$?
	echo "$rc" >"$dir/alone.rc"
) &
last=$!

keep=()
if mkdir -p "$runs"; then
	keep=(-keep "$runs/$(date -u +%Y%m%dT%H%M%SZ).json")
	# the last 5 runs stay (the names sort by time)
	find "$runs" -maxdepth 1 -name '*.json' | sort | head -n -4 | xargs -r rm -f
else
	echo "test-tiers: cannot create $runs: this run's events are not kept" >&2
fi
"$table" "${keep[@]}" "$dir/race" "$dir/rest" "$dir/vm" "$dir/alone"
table_rc=$?
if ((${#keep[@]} > 0)); then
	echo "test-tiers: the run's go test -json is in ${keep[1]} (hack/testtable -slowest 0 ${keep[1]} lists every test)"
fi
if ((table_rc != 0)); then
	for p in "$lane" "$rest" "$last"; do
		pkill -P "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
fi
wait "$lane" "$rest" "$last"
rcs=()
for f in race rest vm alone; do
	rcs+=("$(cat "$dir/$f.rc" 2>/dev/null || echo 2)")
done
echo "test-tiers: race tier exit ${rcs[0]}, rest exit ${rcs[1]}, guest exit ${rcs[2]}, guest alone exit ${rcs[3]}"
for rc in "${rcs[@]}" "$table_rc"; do
	if ((rc != 0)); then
		exit "$rc"
	fi
done
