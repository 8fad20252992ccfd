#!/usr/bin/env bash
# test-tiers.sh TESTTABLE: make test's two tiers, side by side.
# - the race tier: internal/... and cmd/... with -race, one package at a time, under nice (RACE_NICE,
#   default 5), so that the real node's OOM races keep the CPU they had when the tiers ran one after
#   the other;
# - the rest of ./... without -race: the API-server, real-node, guest and e2e packages. The real-node
#   ones take turns on the node lock, which bounds the run (about 45 min warm of node time): the race
#   tier (about 17 min one package at a time beside it, 5 min of the run when it ran first) is off the
#   critical path.
# Each tier writes go test -json into its own FIFO; TESTTABLE merges them as they come, prints what plain
# go test would and ends with the table of each package's wall time. The merged events are kept in
# TEST_RUNS (default ~/.cache/pressure/test-runs; the last 5 runs) to read again: testtable -slowest 0 FILE
# lists every test's time. The exit status is the first tier's that failed (else the table's).
set -uo pipefail

table=${1:?usage: test-tiers.sh TESTTABLE}
go=${GO:-go}
timeout=${TEST_TIMEOUT:-75m}
race_nice=${RACE_NICE:-5}
runs=${TEST_RUNS:-${PRESSURE_CACHE:-$HOME/.cache/pressure}/test-runs}
module=$($go list -m) || exit 2
rest_pkgs=$($go list ./... | grep -v -e "^$module/internal/" -e "^$module/cmd/") || {
	echo "test-tiers: go list ./... failed" >&2
	exit 2
}

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/race" "$dir/rest"

echo "race tier: nice -n $race_nice $go test -json -race -p 1 -count=1 -timeout $timeout ./internal/... ./cmd/..."
nice -n "$race_nice" "$go" test -json -race -p 1 -count=1 -timeout "$timeout" ./internal/... ./cmd/... >"$dir/race" &
race=$!
echo "rest: $go test -json -count=1 -timeout $timeout (every other package)"
# shellcheck disable=SC2086 # one word per package
"$go" test -json -count=1 -timeout "$timeout" $rest_pkgs >"$dir/rest" &
rest=$!

keep=()
if mkdir -p "$runs"; then
	keep=(-keep "$runs/$(date -u +%Y%m%dT%H%M%SZ).json")
	# the last 5 runs stay (the names sort by time)
	find "$runs" -maxdepth 1 -name '*.json' | sort | head -n -4 | xargs -r rm -f
else
	echo "test-tiers: cannot create $runs: this run's events are not kept" >&2
fi
"$table" "${keep[@]}" "$dir/race" "$dir/rest"
table_rc=$?
if ((${#keep[@]} > 0)); then
	echo "test-tiers: the run's go test -json is in ${keep[1]} (hack/testtable -slowest 0 ${keep[1]} lists every test)"
fi
if ((table_rc != 0)); then
	kill "$race" "$rest" 2>/dev/null
fi
race_rc=0
rest_rc=0
wait "$race" || race_rc=$?
wait "$rest" || rest_rc=$?
echo "test-tiers: race tier exit $race_rc, rest exit $rest_rc"
for rc in "$race_rc" "$rest_rc" "$table_rc"; do
	if ((rc != 0)); then
		exit "$rc"
	fi
done
