#!/usr/bin/env bash
# readme-install.sh runs the README's install steps word for word: the shell code between the lines
# `<!-- install:begin -->` and `<!-- install:end -->` of README.md (its ``` fence lines dropped), in
# one bash with -euo pipefail and -x (each command is printed before it runs), from the repository's
# root. Nothing is added: what the README leaves to the reader comes from the environment, as it would
# for a reader (KUBECONFIG for kubectl and helm, KUBELET_CONFIG for the kubelet configuration file,
# CONTAINERD_ADDRESS for ctr when containerd listens elsewhere than /run/containerd/containerd.sock,
# PATH for helm). test/readmeinstall runs it on the real test node.
#
# With --remove it runs the README's removal steps instead (`<!-- remove:begin -->` to
# `<!-- remove:end -->`).
#
# Usage: hack/readme-install.sh [--remove] [--print]   run (--print: print) the install (removal) steps
set -euo pipefail

section=install print=
for arg in "$@"; do
	case "${arg}" in
	--remove) section=remove ;;
	--print) print=1 ;;
	*) echo "readme-install: unknown argument ${arg} (usage: hack/readme-install.sh [--remove] [--print])" >&2; exit 2 ;;
	esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readme="${root}/README.md"

begin="<!-- ${section}:begin -->" end="<!-- ${section}:end -->"
begins="$(grep -c -x -F "${begin}" "${readme}" || true)"
ends="$(grep -c -x -F "${end}" "${readme}" || true)"
if [[ "${begins}" != 1 || "${ends}" != 1 ]]; then
	echo "readme-install: ${readme}: want one ${begin} and one ${end} line, found ${begins} and ${ends}" >&2
	exit 1
fi
steps="$(awk -v begin="${begin}" -v end="${end}" '
	$0 == begin  { on = 1; next }
	$0 == end    { on = 0; next }
	on && /^```/ { next }
	on           { print }
' "${readme}")"
if [[ -z "$(grep -v -e '^[[:space:]]*$' -e '^[[:space:]]*#' <<<"${steps}")" ]]; then
	echo "readme-install: ${readme}: no command between ${begin} and ${end}" >&2
	exit 1
fi

if [[ -n "${print}" ]]; then
	printf '%s\n' "${steps}"
	exit 0
fi
cd "${root}"
exec bash -euxo pipefail -c "${steps}"
