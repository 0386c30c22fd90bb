#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates docs/reproductions.md's generated blocks from the reproduction studies' outputs, so that
# their figures and verdicts cannot go stale (issue 41). Each block is
#   <!-- BEGIN generated: reproduction NAME -->
#   ...the table and verdict formatted from DIR/NAME/points.csv...
#   <!-- END generated -->
# and the prose outside the blocks is kept as written (re-read it against the new tables). Verdicts use
# fixed words: reproduces (the direction, and the size within 30 % of the paper's, at every comparable
# setting), direction only, does not, not comparable. The tables and verdicts are scripts/gen_reproductions.py
# (its unit tests: tests/reproductions/test_gen_reproductions.py).
#   scripts/gen-reproductions.sh DIR            blocks from DIR/NAME (epsim sweep outputs)
#   scripts/gen-reproductions.sh --run DIR [EPSIM]   first runs the studies into DIR (-j 2)
#   scripts/gen-reproductions.sh --check DIR    exit 1, printing the difference, where the doc's blocks are
#                                               not what DIR's outputs give (writes nothing)
#   scripts/gen-reproductions.sh --list         the studies (experiments/reproductions/NAME.toml)
# Studies: director-load, director, metro, grace-affinity, gem, gem-load and vibe
# (experiments/reproductions/NAME.toml).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
studies=(director-load director metro grace-affinity gem gem-load vibe)
mode=write
case "${1:-}" in
  --run) mode=run; shift ;;
  --check) mode=check; shift ;;
  --list) printf '%s\n' "${studies[@]}"; exit 0 ;;
esac
[ $# -ge 1 ] || { echo "usage: gen-reproductions.sh [--run|--check] DIR [EPSIM] | --list" >&2; exit 2; }
dir=$1
epsim=${2:-$root/build/release/epsim}

if [ $mode = run ]; then
  [ -x "$epsim" ] || { echo "gen-reproductions: no epsim binary at $epsim" >&2; exit 2; }
  mkdir -p "$dir"
  for s in "${studies[@]}"; do
    "$epsim" sweep "$root/experiments/reproductions/$s.toml" --out "$dir/$s" -j 2 --progress none >/dev/null
  done
fi
for s in "${studies[@]}"; do
  [ -f "$dir/$s/points.csv" ] || { echo "gen-reproductions: no $dir/$s/points.csv (run the study, or --run)" >&2; exit 2; }
done

python3 "$root/scripts/gen_reproductions.py" "$root/docs/reproductions.md" "$dir" "$mode"
