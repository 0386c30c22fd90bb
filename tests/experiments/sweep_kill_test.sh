#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# A sweep killed with SIGKILL loses no finished run: the same command again finishes it, and the
# outputs are byte for byte those of an uninterrupted sweep on another thread count, and (when mpirun
# is given) of the same sweep over 2 MPI ranks.
# usage: sweep_kill_test.sh EPSIM TEST_DATA_DIR [MPIRUN]
set -euo pipefail
epsim=$1
data=$(cd "$2" && pwd)
mpirun=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/study.toml" <<EOT
[study]
kind = "compare"
base = "$data/small.toml"
replications = 3
[[axis]]
name = "policy"
policies = ["linear", "eplb", "gem"]
[[axis]]
key = "workload.rate_rps"
values = [2.0, 4.0, 8.0]
[[axis]]
key = "workload.num_requests"
values = [300]
EOT

"$epsim" sweep "$work/study.toml" --out "$work/reference" -j 2 --progress none > /dev/null

"$epsim" sweep "$work/study.toml" --out "$work/killed" -j 1 --progress plain > /dev/null 2>&1 &
pid=$!
journal="$work/killed/journal/rank-0.jsonl"
for _ in $(seq 1 600); do
  if [ -f "$journal" ] && [ "$(wc -l < "$journal")" -ge 4 ]; then break; fi
  sleep 0.05
done
kill -9 "$pid" 2> /dev/null || true
wait "$pid" 2> /dev/null || true
finished=$(wc -l < "$journal")
echo "killed after $finished finished runs"
if [ "$finished" -ge 27 ] || [ -f "$work/killed/points.csv" ]; then
  echo "FAIL: the sweep finished before it could be killed; make the runs longer" >&2
  exit 1
fi

"$epsim" sweep "$work/study.toml" --out "$work/killed" -j 2 --progress none > /dev/null 2> "$work/resume.err"
grep -q "from the journal" "$work/resume.err"
for f in runs.csv points.csv max_rate.csv; do
  cmp "$work/reference/$f" "$work/killed/$f"
done
if find "$work/killed" -name '*.tmp-*' | grep -q .; then
  echo "FAIL: temporary files left behind" >&2
  exit 1
fi

if [ -n "$mpirun" ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
  "$mpirun" -n 2 "$epsim" sweep "$work/study.toml" --out "$work/mpi" --progress none > /dev/null 2> "$work/mpi.err" || {
    cat "$work/mpi.err" >&2
    exit 1
  }
  grep -q "over 2 ranks" "$work/mpi.err"
  for f in runs.csv points.csv max_rate.csv; do
    cmp "$work/reference/$f" "$work/mpi/$f"
  done
  echo "mpirun -n 2: identical"
fi
echo "OK"
