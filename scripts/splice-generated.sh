#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Puts BLOCK between the lines `<!-- BEGIN generated: SCRIPT -->` and `<!-- END generated -->` of DOC (the
# rest of DOC kept as written), or with --check changes nothing and fails when the block differs. The
# doc generators (gen-slo-doc.sh, gen-accuracy-doc.sh) share it, so their pages cannot go stale the same way.
#   scripts/splice-generated.sh [--check] DOC BLOCK SCRIPT WHAT
# WHAT names the generated part in the failure message ("docs/serving.md's SLO-search figures"). A script
# with several blocks in one doc names each after its own name ("gen-reproductions.sh metro").
set -euo pipefail
check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  shift
fi
doc=$1 block=$2 script=$3 what=$4
begin="<!-- BEGIN generated: scripts/$script -->"
grep -qxF "$begin" "$doc" || { echo "$script: no '$begin' line in $doc" >&2; exit 1; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
awk -v begin="$begin" -v block="$block" '
  $0 == begin { print; while ((getline line < block) > 0) print line; skip = 1; next }
  skip && $0 == "<!-- END generated -->" { skip = 0 }
  !skip { print }
' "$doc" >"$out"
if [ $check = 1 ]; then
  diff -u "$doc" "$out" >&2 || {
    echo "FAILED: $what are stale: run scripts/${script%% *}" >&2
    exit 1
  }
else
  cat "$out" >"$doc"
fi
