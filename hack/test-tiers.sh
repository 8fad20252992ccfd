#!/usr/bin/env bash
# test-tiers.sh TESTTABLE: make test's three lanes, side by side.
# - the race lane: internal/... and cmd/... with -race, one package at a time, under nice (RACE_NICE,
#   default 5), so that the real node's OOM races keep the CPU they had when the tiers ran one after
#   the other; once it is done, the same lane runs the cgroup v2 guest (test/vm/...). The guest needs no
#   node lock. Its qemu and its builds run under nice 15 (the tests set it), so the real node's tests
#   keep the CPU first; VM_NICE (default 0) adds to that for the whole go test, the host-side control
#   plane the guest's kubelet uses included. A first try (f414eae) ran the lane under nice 10, which put
#   qemu at 19: it passed once (41.3 min) and the next run starved the guest's agent past the race's
#   3 s wait for its eviction Event. That wait is 30 s since 8d8b09a, and the lane's default is 0.
# - the rest of ./... without -race: the API-server, real-node and e2e packages. The real-node ones
#   take turns on the node lock, which bounds the run (about 45 min warm of node time with the short
#   soak): the race tier (about 12 to 17 min) and the guest (about 14 min) are off the critical path.
#   Without the lane the guest ran last, behind test/deploy's go test slot held for 27 min waiting for
#   the node lock: 14 min more.
# Each lane writes go test -json into its own FIFO; TESTTABLE merges them as they come, prints what plain
# go test would and ends with the table of each package's wall time. The exit status is the first
# lane's that failed (else the table's).
set -uo pipefail

table=${1:?usage: test-tiers.sh TESTTABLE}
go=${GO:-go}
timeout=${TEST_TIMEOUT:-75m}
race_nice=${RACE_NICE:-5}
vm_nice=${VM_NICE:-0}
module=$($go list -m) || exit 2
all_pkgs=$($go list ./...) || {
	echo "test-tiers: go list ./... failed" >&2
	exit 2
}
rest_pkgs=$(grep -v -e "^$module/internal/" -e "^$module/cmd/" -e "^$module/test/vm\(/\|$\)" <<<"$all_pkgs")
vm_pkgs=$(grep -e "^$module/test/vm\(/\|$\)" <<<"$all_pkgs")

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/race" "$dir/rest" "$dir/vm"

echo "race lane: nice -n $race_nice $go test -json -race -p 1 -count=1 -timeout $timeout ./internal/... ./cmd/..."
echo "           then nice -n $vm_nice $go test -json -count=1 -timeout $timeout ./test/vm/..."
(
	nice -n "$race_nice" "$go" test -json -race -p 1 -count=1 -timeout "$timeout" ./internal/... ./cmd/... >"$dir/race" &
	race=$!
	exec 3>"$dir/vm" # opened now: TESTTABLE opens its inputs in order, before it reads any
	rc=0
	wait "$race" || rc=$?
	echo "$rc" >"$dir/race.rc"
	rc=0
	# shellcheck disable=SC2086 # one word per package
	nice -n "$vm_nice" "$go" test -json -count=1 -timeout "$timeout" $vm_pkgs >&3 || rc=$?
	echo "$rc" >"$dir/vm.rc"
) &
lane=$!
echo "rest: $go test -json -count=1 -timeout $timeout (every other package)"
# shellcheck disable=SC2086 # one word per package
"$go" test -json -count=1 -timeout "$timeout" $rest_pkgs >"$dir/rest" &
rest=$!

"$table" "$dir/race" "$dir/rest" "$dir/vm"
table_rc=$?
if ((table_rc != 0)); then
	pkill -P "$lane" 2>/dev/null
	kill "$lane" "$rest" 2>/dev/null
fi
rest_rc=0
wait "$lane"
wait "$rest" || rest_rc=$?
race_rc=$(cat "$dir/race.rc" 2>/dev/null || echo 2)
vm_rc=$(cat "$dir/vm.rc" 2>/dev/null || echo 2)
echo "test-tiers: race tier exit $race_rc, guest exit $vm_rc, rest exit $rest_rc"
for rc in "$race_rc" "$rest_rc" "$vm_rc" "$table_rc"; do
	if ((rc != 0)); then
		exit "$rc"
	fi
done
