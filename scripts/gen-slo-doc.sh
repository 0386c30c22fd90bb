#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the demo's SLO-search figures in docs/serving.md, the block between
#   <!-- BEGIN generated: scripts/gen-slo-doc.sh -->  and  <!-- END generated -->
# from what epsim answers today (everything outside the block is kept as written). With --check it
# changes nothing and fails when the block differs from what it would write: the slow test
# "slo_doc_figures" runs that, so the page cannot go stale.
#   scripts/gen-slo-doc.sh [--check] [EPSIM]    (default: build/release/epsim)
set -euo pipefail

check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  shift
fi
root=$(cd "$(dirname "$0")/.." && pwd)
epsim=${1:-$root/build/release/epsim}
doc=$root/docs/serving.md
demo=$root/examples/demo.toml
[ -x "$epsim" ] || { echo "gen-slo-doc: no epsim binary at $epsim (build it, or pass its path)" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The search, its answer and bracket (the .json beside the curve).
"$epsim" slo "$demo" --target 0.9 --out "$tmp/search.csv" >/dev/null 2>&1
"$epsim" slo "$demo" --target 0.9 --burst --out "$tmp/burst.csv" >/dev/null 2>&1
field() {  # FILE PYTHON_EXPRESSION over the answer j and its first replication r
  python3 -c "import json, sys; j = json.load(open(sys.argv[1])); r = j['replications'][0]; print($2)" "$1"
}
rate=$(field "$tmp/search.json" "format(r['max_rate_rps'], '.4g')")
exact=$(field "$tmp/search.json" "repr(r['max_rate_rps'])")
high=$(field "$tmp/search.json" "'none' if r['bracket_high_rps'] is None else format(r['bracket_high_rps'], '.4g')")
failed=$(field "$tmp/search.json" "r['failed_confirmations']")
confirm=$(field "$tmp/search.json" \
  "'{:g}x window: {:.1f} % attainment, p90 TTFT {:.0f} ms'.format(r['confirmation']['window_scale'], \
100 * r['confirmation']['attainment'], r['confirmation']['ttft_p90_ms'])")
burst=$(field "$tmp/burst.json" "format(r['max_rate_rps'], '.4g')")
# A 60 s steady run at the answer (warm-up 12 s and cool-down 6 s excluded, as a probe's 20 % / 10 %).
steady() {  # RATE
  "$epsim" run "$demo" --set workload.rate_rps="$1" --set workload.num_requests=0 --set workload.duration_s=60 \
    --set metrics.warmup_s=12 --set metrics.cooldown_s=6 --out "$tmp/run" >/dev/null 2>&1
  python3 -c "import json, sys; m = json.load(open(sys.argv[1]))['metrics']
print('{:.1f} % attainment, p90 TTFT {:.0f} ms'.format(100 * m['slo']['attainment'], m['ttft_ms']['p90']))" \
    "$tmp/run/summary.json"
}
at_answer=$(steady "$exact")

{
  echo "- \`epsim slo examples/demo.toml --target 0.9\`: **$rate req/s**, bracket [$rate, $high) req/s;"
  echo "  $failed rate(s) the search's probes passed failed the confirmation; at the answer the $confirm."
  echo "- a 60 s steady run at exactly $exact req/s (\`--set workload.num_requests=0 --set workload.duration_s=60\`,"
  echo "  warm-up 12 s, cool-down 6 s): $at_answer."
  echo "- \`--burst\` (every probe serves the config's 600 requests): $burst req/s."
} >"$tmp/block"

args=("$doc" "$tmp/block" gen-slo-doc.sh "docs/serving.md's SLO-search figures")
[ $check = 1 ] && args=(--check "${args[@]}")
bash "$root/scripts/splice-generated.sh" "${args[@]}"
