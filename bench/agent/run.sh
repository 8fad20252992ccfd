#!/bin/sh
# bench/agent: the chart-installed pressure-agent vs the kubelet alone on the level-2 test cluster
# (docs/benchmarks.md, "Agent").
# Run as root from anywhere; extra arguments go to the benchmark (e.g. -runs 10 -steady-pods 50).
set -eu
cd "$(dirname "$0")/../.."
go build -o "${TMPDIR:-/tmp}/pressure-bench-agent" ./bench/agent
exec "${TMPDIR:-/tmp}/pressure-bench-agent" "$@"
