#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/deployments.md's table is what the examples produce: each setup run as the table says, its
# throughput per node computed from steps.csv as the page describes, and compared with the table's epsim
# column (to the unit it prints).
#   deployments_test.sh EPSIM REPO_ROOT
set -euo pipefail
epsim=$1
root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
doc=$root/docs/deployments.md
examples=$root/examples/deployments

# A cell of the table row whose first cell starts with $1: its number before any parenthesis, digits only
# (cell 4: epsim; cell 6: epsim with today's DeepEP).
documented() {  # LABEL CELL
  grep -F "| $1" "$doc" | head -1 | awk -F'|' -v c=$(($2 + 1)) '{print $c}' | sed 's/(.*//' | tr -dc '0-9'
}
check() {  # LABEL MEASURED [CELL]
  local want
  want=$(documented "$1" "${3:-4}")
  [ -n "$want" ] || { echo "FAILED: no row '$1' (cell ${3:-4}) in docs/deployments.md"; exit 1; }
  [ "$2" = "$want" ] || { echo "FAILED: $1: the examples give $2, docs/deployments.md says $want"; exit 1; }
}
# Prefill: steps of at least 470,000 prompt tokens and no decode; input tokens over their time, per node (4).
prefill() {  # PROMPT_TOKENS [--set KEY=VALUE]...
  local tokens=$1
  shift
  rm -rf "$out/pf"
  "$epsim" run "$examples/sglang-prefill-ep32.toml" --set workload.prompt_tokens.value="$tokens" \
    --set workload.num_requests=$((2048 * 4096 / tokens)) --set output.steps_csv=true "$@" --out "$out/pf" > /dev/null
  awk -F, 'NR > 1 && $6 >= 470000 && $7 == 0 { d += $5; t += $6 } END { printf "%.0f", t / (d / 1e9) / 4 }' \
    "$out/pf/steps.csv"
}
check "prefill, 1K prompts" "$(prefill 1024)"
check "prefill, 2K prompts" "$(prefill 2048)"
check "prefill, 4K prompts, 16,384" "$(prefill 4096)"
check "prefill, 4K prompts, balanced routing" "$(prefill 4096 --set routing.zipf_exponent=0)"
check "the same on H800" "$(prefill 4096 --set routing.zipf_exponent=0 --set 'cluster.preset="hgx-h800"')"
today=(--set communication.rdma_efficiency=0.95)
check "prefill, 1K prompts" "$(prefill 1024 "${today[@]}")" 6
check "prefill, 2K prompts" "$(prefill 2048 "${today[@]}")" 6
check "prefill, 4K prompts, 16,384" "$(prefill 4096 "${today[@]}")" 6
check "prefill, 4K prompts, balanced routing" "$(prefill 4096 --set routing.zipf_exponent=0 "${today[@]}")" 6
# Decode: steps with all 18,432 requests decoding and no prefill; output tokens over their time, per node (9).
"$epsim" run "$examples/sglang-decode-ep72.toml" --set output.steps_csv=true --out "$out/dc" > /dev/null
decode=$(awk -F, 'NR > 1 && $7 == 18432 && $6 == 0 { n++; d += $5 } END { printf "%.0f", 18432 / (d / n / 1e9) / 9 }' \
  "$out/dc/steps.csv")
check "decode, 2,000-token inputs" "$decode"
# The disaggregated setup: every decode rank serves, as evenly as the table says.
"$epsim" run "$examples/sglang-disaggregated.toml" --out "$out/dis" > /dev/null
ranks=$(awk -F, 'NR > 1 && $2 == 1 { seen[$3] = 1 } END { print length(seen) }' "$out/dis/requests.csv")
check "decode ranks that decoded" "$ranks" 2
per_rank() {  # min|max
  python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['metrics']['pools']['decode']['requests_per_rank'][sys.argv[2]])" \
    "$out/dis/summary.json" "$1"
}
check "fewest requests a decode rank decoded" "$(per_rank min)" 2
check "most requests a decode rank decoded" "$(per_rank max)" 2
metric() {  # PYTHON_EXPRESSION over the summary's metrics m, printed as the table prints it
  python3 -c "import json, sys; m = json.load(open(sys.argv[1]))['metrics']; print($1)" "$out/dis/summary.json"
}
check "disaggregated TPOT, mean ms" "$(metric "f'{m[\"tpot_ms\"][\"mean\"]:.1f}'" | tr -dc '0-9')" 2
check "disaggregated barrier idle" "$(metric "round(100 * m['barrier_idle_fraction'])")" 2
echo "docs/deployments.md matches the examples"
