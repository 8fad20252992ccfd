#!/usr/bin/env bash
# cluster.sh up [--node] | down | env | node-lock: a detached test cluster (package test/cluster).
#   up      starts etcd, kube-apiserver, kube-controller-manager, kube-scheduler (and with --node
#           containerd + kubelet; root only) in their own sessions, records their PIDs in
#           ${PRESSURE_STATE:-$HOME/.cache/pressure/cluster}/state.json and returns.
#   env     prints `export KUBECONFIG=...`: eval "$(hack/cluster.sh env)"
#   down    stops the recorded PIDs (only those) and cleans up the node; also after a crash.
#   node-lock  waits until no node holds /run/pressure-node.lock, saying who holds it at once and
#           every 30 s; fails at once when a detached cluster (make demo) holds it (make test runs it).
#           --check: says who holds it without waiting, fails only for a detached cluster (make test's
#           first step).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="${PRESSURE_CACHE:-${HOME}/.cache/pressure}/cluster-cli"
cd "${repo}"
go build -o "${bin}" ./test/cluster/cmd/cluster
exec "${bin}" "$@"
