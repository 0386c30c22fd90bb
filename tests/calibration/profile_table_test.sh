#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tools/profile's table, as its profiler writes it, is read by epsim: every planned shape of every model
# and op (collectives for 16 GPUs, 8 per node), given synthetic latencies, goes through
# `epsim calibrate check` (which parses and validates each row and prices it). No GPU, no torch.
set -euo pipefail
epsim=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 - "$root/tools/profile" "$dir/table.csv" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import table
plan = table.build_plan(list(table.MODELS), list(table.OPS), gpus=16, gpus_per_node=8, cluster="hgx-h100")
rows = [table.make_row(p.op, "h100", 10.0 + i, p.shape_dict(), extra={"device_name": "synthetic"})
        for i, p in enumerate(plan)]
print("rows:", table.write_table(sys.argv[2], rows))
PY
out=$("$epsim" calibrate check "$dir/table.csv" --gpu h100 --cluster hgx-h100)
echo "$out"
rows=$(grep -c '' "$dir/table.csv")
echo "$out" | grep -q "$((rows - 1)) rows priced by the model" || { echo "FAIL: not every row was priced" >&2; exit 1; }
for op in expert_ffn dense_gemm attention_prefill attention_decode all_to_all all_reduce send_recv; do
  echo "$out" | grep -q "| $op |" || { echo "FAIL: no $op rows checked" >&2; exit 1; }
done
echo "profile table: OK"
