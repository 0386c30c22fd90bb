#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates docs/accuracy.md's tables, the block between
#   <!-- BEGIN generated: scripts/gen-accuracy-doc.sh -->  and  <!-- END generated -->
# from what `epsim accuracy` prints for the shipped suite today (its accuracy.md; everything outside the
# block is kept as written). With --check it changes nothing and fails when the block differs from what
# it would write: the slow test "accuracy_doc" runs that, so the page cannot go stale.
#   scripts/gen-accuracy-doc.sh [--check] [EPSIM]    (default: build/release/epsim)
set -euo pipefail

check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
epsim=${1:-$root/build/release/epsim}
doc=$root/docs/accuracy.md
[ -x "$epsim" ] || { echo "gen-accuracy-doc: no epsim binary at $epsim (build it, or pass its path)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$epsim" accuracy -j 2 --out "$tmp/acc" >/dev/null 2>&1 || { "$epsim" accuracy -j 2 --out "$tmp/acc" >/dev/null; exit 1; }

args=("$doc" "$tmp/acc/accuracy.md" gen-accuracy-doc.sh "docs/accuracy.md's tables")
[ $check = 1 ] && args=(--check "${args[@]}")
bash "$root/scripts/splice-generated.sh" "${args[@]}"
