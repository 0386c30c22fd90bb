#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates docs/reproductions.md's table of the H200 power-limiter measurement (the block between
#   <!-- BEGIN generated: scripts/gen-power-doc.sh -->  and  <!-- END generated -->)
# from data/power/ with tools/power/summarise.py and the DVFS model's fit (tools/power/dvfs_fit.py); with --check it changes nothing and fails when the
# block differs (CTest power_h200_summary), so the figures the doc quotes cannot be typed by hand.
#   scripts/gen-power-doc.sh [--check]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
check=()
if [ "${1:-}" = "--check" ]; then check=(--check); fi
block=$(mktemp)
trap 'rm -f "$block"' EXIT
python3 "$root/tools/power/summarise.py" "$root/data/power/h200-gemm-kernels.csv.gz" \
  "$root/data/power/h200-gemm-smi.csv.gz" >"$block"
{
  printf '\nThe power-limiter model (hardware/dvfs.hpp) fitted to it by tools/power/dvfs_fit.py:\n\n'
  python3 "$root/tools/power/dvfs_fit.py" "$root/data/power/h200-gemm-kernels.csv.gz" \
    "$root/data/power/h200-lockstep-kernels.csv.gz"
} >>"$block"
bash "$root/scripts/splice-generated.sh" "${check[@]}" "$root/docs/reproductions.md" "$block" gen-power-doc.sh \
  "docs/reproductions.md's H200 power-limiter table"
