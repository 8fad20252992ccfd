#!/usr/bin/env bash
# flake-check.sh RUN PKG N: runs `go test -count=1 -v -run RUN PKG` N times, never stopping early, and
# reports each run's result (pass or fail, wall time, the failed tests) and the tally. A run that ran
# no test, or skipped one, is not a pass (the skip's reason is printed). Each run's full
# output is kept in a log directory, named at the end. Exit status 1 when any run failed.
set -uo pipefail

run=${1:-}
pkg=${2:-./...}
n=${3:-5}
timeout=${TEST_TIMEOUT:-75m}
go=${GO:-go}
if [[ -z "$run" ]]; then
	echo "flake-check: RUN is empty: name the tests, e.g. make flake-check RUN='TestX\$' PKG=./test/e2edisk N=5" >&2
	exit 2
fi
if ! [[ "$n" =~ ^[1-9][0-9]*$ ]]; then
	echo "flake-check: N=$n is not a positive integer" >&2
	exit 2
fi
logs=$(mktemp -d "${TMPDIR:-/tmp}/flake-check.XXXXXX")
echo "flake-check: go test -count=1 -v -timeout $timeout -run '$run' $pkg, $n runs; logs in $logs"
passed=0
for i in $(seq 1 "$n"); do
	log="$logs/run-$i.log"
	start=$(date +%s)
	"$go" test -count=1 -v -timeout "$timeout" -run "$run" $pkg >"$log" 2>&1
	rc=$?
	secs=$(($(date +%s) - start))
	# The tests that ran and passed, failed or skipped (subtests included), in the log's order.
	npass=$(grep -cE '^\s*--- PASS' "$log")
	nskip=$(grep -cE '^\s*--- SKIP' "$log")
	fails=$(grep -E '^\s*--- FAIL' "$log" | sed -E 's/^\s*--- FAIL: ([^ ]+).*/\1/' | paste -sd' ' -)
	if [[ $rc == 0 && $npass == 0 && $nskip == 0 && -z "$fails" ]]; then
		rc=1 # a run that ran no test proves nothing
		fails="no test ran: does RUN match a test of $pkg?"
	elif [[ $rc == 0 && $nskip != 0 ]]; then
		rc=1 # nor does a skipped test: its reason is printed below
		fails="$nskip skipped"
	fi
	if [[ $rc == 0 ]]; then
		passed=$((passed + 1))
		echo "run $i/$n: pass in ${secs}s ($npass passed, $nskip skipped)"
	else
		echo "run $i/$n: FAIL in ${secs}s (exit $rc; $npass passed, $nskip skipped; failed: ${fails:-none named, see the log})"
	fi
	if [[ $nskip != 0 ]]; then
		# The skip's reason is the test's log line just before its "--- SKIP".
		grep -E '^\s*--- SKIP' -B1 "$log" | grep -vE '^\s*--- SKIP|^--$' | sed 's/^ */  skipped: /'
	fi
done
echo "flake-check: $passed of $n runs passed (-run '$run' $pkg); logs in $logs"
[[ $passed == "$n" ]]
