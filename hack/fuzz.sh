#!/usr/bin/env bash
# fuzz.sh runs every fuzz target of the module with -fuzz, one at a time, for FUZZTIME each (default
# 30s), and ends with a table: target, package, execs, new interesting inputs, result. A failing input
# is written by go test to the package's testdata/fuzz/<target>/ (commit it with the fix: it is then a
# seed that every go test replays). Exit status: 1 when any target failed.
#   hack/fuzz.sh --list     print "package target" per target and exit
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME="${FUZZTIME:-30s}"

# targets prints "./dir FuzzName" for every func FuzzX(f *testing.F) in a _test.go file, sorted.
targets() {
	git ls-files --cached --others --exclude-standard '*_test.go' |
		xargs grep -H -o '^func Fuzz[A-Za-z0-9_]*(f \*testing\.F)' |
		sed -E 's#^(.*)/[^/]*_test\.go:func (Fuzz[A-Za-z0-9_]*)\(.*#./\1 \2#' | sort -u
}

if [[ "${1:-}" == "--list" ]]; then
	targets
	exit 0
fi

mapfile -t all < <(targets)
rows=() failed=0
for t in "${all[@]}"; do
	pkg="${t% *}" name="${t#* }"
	echo "fuzz: $name in $pkg for $FUZZTIME"
	log="$(mktemp)"
	start=$SECONDS
	if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$FUZZTIME" "$pkg" 2>&1 | tee "$log"; then
		result=ok
	elif grep -q '^    context deadline exceeded$' "$log" && ! grep -q 'Failing input written' "$log"; then
		# Go 1.26's fuzz coordinator can report its own -fuzztime deadline as a failure, with no
		# input (golang/go#75804, fixed in Go 1.27): not a finding of the target.
		result="ok (go#75804 deadline report, no input)"
	else
		result=FAIL failed=1
	fi
	# The last progress line: "fuzz: elapsed: 10s, execs: 123456 (12345/sec), new interesting: 3 (total: 40)".
	execs="$(grep -o 'execs: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)"
	interesting="$(grep -o 'new interesting: [0-9]*' "$log" | tail -1 | cut -d' ' -f3)"
	rows+=("$(printf '%-30s %-36s %12s %12s %6ss  %s' "$name" "$pkg" "${execs:-?}" "${interesting:-?}" "$((SECONDS - start))" "$result")")
	rm -f "$log"
done
echo
printf '%-30s %-36s %12s %12s %7s  %s\n' TARGET PACKAGE EXECS INTERESTING WALL RESULT
printf '%s\n' "${rows[@]}"
exit "$failed"
