#!/usr/bin/env bash
# install-node-deps.sh installs what a level-2 test node (test/cluster StartNode) needs from
# Debian's apt repositories when it is missing: containerd (1.6), runc, the CNI plugins
# (bridge, host-local, loopback in /usr/lib/cni), iptables, gcc for make test's -race and zip for make
# dist's windows archive (test/release runs make release). It never starts a daemon:
# the Debian packages' service units are not used (there is no systemd here); test/cluster
# starts containerd by hand. Idempotent: exits at once when everything is present.
set -euo pipefail

log() { echo "install-node-deps: $*" >&2; }

need=()
command -v containerd >/dev/null 2>&1 || need+=(containerd)
command -v ctr >/dev/null 2>&1 || need+=(containerd)
command -v runc >/dev/null 2>&1 || need+=(runc)
[[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] || need+=(containernetworking-plugins)
command -v iptables >/dev/null 2>&1 || need+=(iptables)
# Not the node's: make test runs internal/... and cmd/... with -race, which needs cgo, so a C compiler.
command -v gcc >/dev/null 2>&1 || need+=(gcc libc6-dev)
# Not the node's either: make dist (and make release, which test/release runs) zips the windows archive.
command -v zip >/dev/null 2>&1 || need+=(zip)
if [[ ${#need[@]} -eq 0 ]]; then
	exit 0
fi
if [[ "$(id -u)" != 0 ]]; then
	log "missing ${need[*]} and not root: run as root: apt-get install -y ${need[*]}"
	exit 1
fi
mapfile -t need < <(printf '%s\n' "${need[@]}" | sort -u)
log "installing ${need[*]} with apt-get..."
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# policy-rc.d 101 keeps the package scripts from trying to start services.
policy=/usr/sbin/policy-rc.d
created_policy=false
if [[ ! -e "${policy}" ]]; then
	printf '#!/bin/sh\nexit 101\n' >"${policy}"
	chmod +x "${policy}"
	created_policy=true
fi
trap 'if [[ "${created_policy}" == true ]]; then rm -f "${policy}"; fi' EXIT
apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
log "installed ${need[*]}"
