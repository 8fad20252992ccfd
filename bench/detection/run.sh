#!/bin/sh
# Detection-latency benchmark (see docs/benchmarks.md "## Detection latency").
# Needs root and the cgroup v1 memory controller at /sys/fs/cgroup/memory. Takes about 5 minutes.
# With -guest: the cgroup v2 mechanisms in the test/vm guest (hack/install-vm-deps.sh first; no root),
# written to last-run-v2.md.
# Usage: bench/detection/run.sh [flags of the Go program, e.g. -crossings 20 -idle 20s]
set -eu
cd "$(dirname "$0")/../.."
bin=$(mktemp -d)/detection
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build -o "$bin" ./bench/detection
out=bench/detection/last-run.md
case " $* " in *" -guest "*) out=bench/detection/last-run-v2.md ;; esac
"$bin" "$@" | tee "$out"
