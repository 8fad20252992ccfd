#!/bin/bash
# bench/agent/compare-commits.sh OLD NEW [ALTERNATIONS] -- BENCH-ARGS...
# Runs bench/agent (run.sh) with BENCH-ARGS on commit OLD, then NEW, ALTERNATIONS times (default 2), each
# from a git worktree of that commit (so each run installs that commit's chart and images), and prints
# every run's CPU rows and medians with the commit they came from: a side-by-side comparison in one
# sitting, as docs/benchmarks.md asks. Run as root with the node lock free. Full reports stay in the
# log named at the end.
# Example: bench/agent/compare-commits.sh 22a9782 667c265 2 -- -runs 0 -contenders D -steady-pods 105 -steady-rounds 2 -steady-for 60s
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 OLD NEW [ALTERNATIONS] -- BENCH-ARGS..." >&2
  exit 2
fi
old=$1 new=$2
shift 2
alternations=2
if [[ $1 != -- ]]; then
  alternations=$1
  shift
fi
if [[ $1 != -- ]]; then
  echo "compare-commits: expected -- before the bench arguments, got $1" >&2
  exit 2
fi
shift
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/pressure-compare-XXXXXX")
log=$work/compare.log
cleanup() {
  for v in old new; do
    git -C "$repo" worktree remove --force "$work/$v" 2>/dev/null || true
  done
}
trap cleanup EXIT
for v in old new; do
  rev=${!v}
  if ! git -C "$repo" rev-parse --verify --quiet "$rev^{commit}" >/dev/null; then
    echo "compare-commits: $v commit $rev: not a commit of $repo" >&2
    exit 2
  fi
  git -C "$repo" worktree add --detach --quiet "$work/$v" "$rev"
done
for i in $(seq 1 "$alternations"); do
  for v in old new; do
    echo "=== $v ($(git -C "$work/$v" log --oneline -1 | cut -c1-60)), alternation $i of $alternations, $(date -u +%T) UTC" | tee -a "$log" >&2
    (cd "$work/$v" && bash bench/agent/run.sh "$@") >>"$log" 2>&1
  done
done
echo "CPU rows (round | contender | pods | window | CPU | % of a core | RSS | VmHWM), by commit:"
awk '/^=== /{v=$2} /^\| [0-9]+ \|/{print v": "$0} /^Median/{print v": "$0}' "$log"
echo "full log: $log"
