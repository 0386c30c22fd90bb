#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# docs/engines.md's workflow (examples/engines/workflow.sh) run as written, then every file it wrote read
# back by `epsim place --check` in its engine's format against the recording it was placed from.
#   workflow_test.sh EPSIM REPO_ROOT
set -euo pipefail
epsim=$1
root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
bash "$root/examples/engines/workflow.sh" "$epsim" "$out" > "$out/log.txt"
grep -q "imported 8 steps (112 tokens, 16 prefix-cached tokens left out) of 26 MoE layers x 64 experts, top-6" "$out/log.txt"
grep -q "8 steps, 112 tokens" "$out/routed-stats.txt"
samples=$root/examples/engines
# The other recordings import too, and trace stats reads what each import wrote.
"$epsim" trace import "$samples/trtllm-stats" "$out/trtllm.trace" --model deepseek-v2-lite | grep -q "imported 8 steps (256 tokens)"
"$epsim" trace import "$samples/load-history.json" "$out/history.trace" --model deepseek-v2-lite | grep -q "imported 12 steps (288 tokens)"
"$epsim" trace stats "$out/trtllm.trace" --ep 8 | grep -q "8 steps, 256 tokens"
"$epsim" trace stats "$out/history.trace" --ep 8 | grep -q "12 steps, 288 tokens"
check() {  # FILE FORMAT LOAD SLOTS_PER_GPU REDUNDANT
  "$epsim" place --check "$out/$1" --format "$2" --model deepseek-v2-lite --gpus 8 --load "$samples/$3" > "$out/check.txt"
  grep -q "$2 placement of 26 MoE layers x 64 experts on 8 GPUs, $4 slots per GPU ($5 redundant)" "$out/check.txt" ||
    { cat "$out/check.txt"; echo "FAILED: $1"; exit 1; }
}
check sglang-map.json sglang vllm-routed.jsonl 10 16
check load_balancer.yaml trtllm trtllm-stats 10 16
check expert_map.json vllm-ascend load-history.json 8 0
check grace-slots.json vllm-slots vllm-routed.jsonl 8 0
# SGLang's map has a row per hidden layer: 27 for DeepSeek-V2-Lite.
[ "$(grep -o '\],\[' "$out/sglang-map.json" | wc -l)" -eq 26 ]
grep -q '^  1: \[' "$out/load_balancer.yaml"
! grep -q '^  0: \[' "$out/load_balancer.yaml"
echo ok
