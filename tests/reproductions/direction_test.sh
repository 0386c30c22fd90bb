#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tiny version of each paper's reproduction (experiments/reproductions/*-tiny.toml, docs/
# reproductions.md): the effect's direction in every paired replication, with a 95 % interval that
# excludes 0.   direction_test.sh EPSIM REPO_ROOT
set -euo pipefail
epsim=$1
root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
check() {  # study axis baseline treatment metric lower|higher
  local study=$1
  shift
  "$epsim" sweep "$root/experiments/reproductions/$study.toml" --out "$out/$study" -j 2 --progress none >/dev/null
  python3 "$root/experiments/reproductions/paired.py" "$out/$study/runs.csv" "$@"
}
check gem-tiny policy linear gem e2e_ms.mean --expect lower
check vibe-tiny policy eplb vibe ttft_ms.p90 --expect lower
check director-tiny policy offline director e2e_ms.mean --expect lower
check metro-tiny policy eplb metro tpot_ms.mean --expect lower
check grace-tiny variant vanilla grace e2e_ms.mean --expect lower
