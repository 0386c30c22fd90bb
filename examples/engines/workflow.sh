#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The workflow of docs/engines.md on the sample recordings here: import and inspect a vLLM recording, then
# place from each engine's recording in the file that engine loads.
#   examples/engines/workflow.sh EPSIM OUT_DIR
set -euo pipefail
epsim=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$epsim" trace import "$here/vllm-routed.jsonl" "$out/routed.trace" --model deepseek-v2-lite
"$epsim" trace stats "$out/routed.trace" --ep 8 > "$out/routed-stats.txt"
"$epsim" place --policy eplb --load "$here/vllm-routed.jsonl" --model deepseek-v2-lite \
  --gpus 8 --slots 80 --format sglang --out "$out/sglang-map.json"
"$epsim" place --policy eplb --load "$here/trtllm-stats" --model deepseek-v2-lite \
  --gpus 8 --slots 80 --format trtllm --out "$out/load_balancer.yaml"
"$epsim" place --policy eplb --load "$here/load-history.json" --model deepseek-v2-lite \
  --gpus 8 --slots 64 --from-step 6 --window-steps 6 --format vllm-ascend --out "$out/expert_map.json"
"$epsim" place --policy grace --load "$here/vllm-routed.jsonl" --model deepseek-v2-lite \
  --gpus 8 --format vllm-slots --out "$out/grace-slots.json"
