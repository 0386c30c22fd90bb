#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates docs/configuration.md's key tables from the code. Each generated block is
#   <!-- BEGIN generated: epsim list keys --markdown SECTION [--except SUBSECTION]... -->
#   ...what that command prints...
#   <!-- END generated -->
# and everything outside the blocks (the prose) is kept as written. The experiments test
# "docs/configuration.md's generated tables match the code" fails until this is rerun after a key changes.
#   scripts/gen-config-doc.sh [EPSIM]    (default: build/release/epsim)
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
epsim=${1:-$root/build/release/epsim}
doc=$root/docs/configuration.md
[ -x "$epsim" ] || { echo "gen-config-doc: no epsim binary at $epsim (build it, or pass its path)" >&2; exit 2; }

begin='^<!-- BEGIN generated: epsim (list keys [^>]*[^ ]) -->$'
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
inside=0
while IFS= read -r line || [ -n "$line" ]; do
  if [[ $line =~ $begin ]]; then
    [ $inside = 0 ] || { echo "gen-config-doc: a BEGIN inside a block: $line" >&2; exit 1; }
    printf '%s\n' "$line"
    read -r -a args <<<"${BASH_REMATCH[1]}"
    "$epsim" "${args[@]}"
    inside=1
  elif [ "$line" = "<!-- END generated -->" ]; then
    inside=0
    printf '%s\n' "$line"
  elif [ $inside = 0 ]; then
    printf '%s\n' "$line"
  fi
done <"$doc" >"$tmp"
[ $inside = 0 ] || { echo "gen-config-doc: a block without <!-- END generated -->" >&2; exit 1; }
cat "$tmp" >"$doc"
