#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates docs/reproductions.md's generated blocks from the reproduction studies' outputs, so that
# their figures and verdicts cannot go stale (issue 41). Each block is
#   <!-- BEGIN generated: scripts/gen-reproductions.sh NAME -->
#   ...the table and verdict formatted from DIR/NAME's points.csv (and runs.csv, max_rate.csv)...
#   <!-- END generated -->
# spliced in by scripts/splice-generated.sh; the prose outside the blocks is kept as written (re-read it
# against the new tables). Verdicts use fixed words: reproduces (the direction, and the size within 30 %
# of the paper's, at every comparable setting), direction only, does not, not comparable. The tables and
# verdicts are scripts/gen_reproductions.py (unit tests: tests/reproductions/test_gen_reproductions.py).
#   scripts/gen-reproductions.sh DIR            blocks from DIR/NAME (epsim sweep outputs)
#   scripts/gen-reproductions.sh --run DIR [EPSIM]   first runs the studies into DIR (-j 2)
#   scripts/gen-reproductions.sh --produce DIR [EPSIM]   only runs them into DIR (writes no doc)
#   scripts/gen-reproductions.sh --check DIR    exit 1, printing the difference, where a block of the doc is
#                                               not what DIR's outputs give (writes nothing)
#   scripts/gen-reproductions.sh --list         the studies (experiments/reproductions/NAME.toml)
# Studies: director-load, director-scale, director, director-ablation, director-why, metro, metro-activated, grace-affinity,
# grace, gem, gem-gap, gem-load, vibe, vibe-dvfs, rebalance-engines, rebalance-kimi and rebalance-atom
# (experiments/reproductions/NAME.toml, run by `epsim sweep`); and routing-skew, the synthetic router's
# decode steps measured as TensorRT-LLM measures real ones (scripts/routing_skew.py over
# experiments/reproductions/routing-skew.toml); and vibe-breakdown, ViBE's Figure 3 setup split into local
# work, expert FFN and all-to-all with TP8 and DP attention (scripts/vibe_breakdown.py over
# experiments/reproductions/vibe-breakdown.toml).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
studies=(director-load director-scale director director-ablation director-why metro metro-activated grace-affinity grace gem
         gem-gap gem-load vibe vibe-dvfs rebalance-engines rebalance-kimi rebalance-atom routing-skew vibe-breakdown)
mode=write
case "${1:-}" in
  --run) mode=run; shift ;;
  --produce) mode=produce; shift ;;
  --check) mode=check; shift ;;
  --list) printf '%s\n' "${studies[@]}"; exit 0 ;;
  -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d'; exit 0 ;;  # the header comment
esac
[ $# -ge 1 ] || { echo "usage: gen-reproductions.sh [--run|--produce|--check] DIR [EPSIM] | --list | --help" >&2; exit 2; }
dir=$1
epsim=${2:-$root/build/release/epsim}

if [ $mode = run ] || [ $mode = produce ]; then
  [ -x "$epsim" ] || { echo "gen-reproductions: no epsim binary at $epsim" >&2; exit 2; }
  mkdir -p "$dir"
  for s in "${studies[@]}"; do
    if [ "$s" = routing-skew ]; then
      python3 "$root/scripts/routing_skew.py" "$epsim" "$dir/$s"
    elif [ "$s" = vibe-breakdown ]; then
      python3 "$root/scripts/vibe_breakdown.py" "$epsim" "$dir/$s"
    else
      "$epsim" sweep "$root/experiments/reproductions/$s.toml" --out "$dir/$s" -j 2 --progress none >/dev/null
    fi
  done
  if [ $mode = produce ]; then
    echo "gen-reproductions: ${#studies[@]} outputs in $dir"
    exit 0
  fi
fi
for s in "${studies[@]}"; do
  [ -f "$dir/$s/points.csv" ] || { echo "gen-reproductions: no $dir/$s/points.csv (run the study, or --run)" >&2; exit 2; }
done

check=()
if [ $mode = check ]; then check=(--check); fi
block=$(mktemp)
trap 'rm -f "$block"' EXIT
for s in "${studies[@]}"; do
  python3 "$root/scripts/gen_reproductions.py" "$dir" "$s" >"$block"
  bash "$root/scripts/splice-generated.sh" "${check[@]}" "$root/docs/reproductions.md" "$block" \
    "gen-reproductions.sh $s" "docs/reproductions.md's table of $s.toml's outputs"
done
echo "gen-reproductions: ${#studies[@]} tables $([ $mode = check ] && echo "match $dir" || echo "written from $dir")"
