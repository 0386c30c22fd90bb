#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What an interrupted or failed `epsim run` leaves: the previous results whole and nothing else (no
# staging directory, no temporary file), whether SIGINT or SIGTERM stops it mid-simulation; a run into
# an --out that is a file fails before it simulates.
#   interrupt_test.sh EPSIM
set -euo pipefail
epsim=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$epsim" run --out "$dir/r" --set output.steps_csv=true >/dev/null
cp "$dir/r/summary.json" "$dir/summary.before"
for sig in INT TERM; do
  "$epsim" run --out "$dir/r" --set workload.num_requests=2000000 >/dev/null 2>&1 &
  pid=$!
  sleep 1.5
  kill -s "$sig" "$pid"
  rc=0
  wait "$pid" || rc=$?
  if [ "$rc" -eq 0 ]; then
    echo "the run finished before SIG$sig: make it longer" >&2
    exit 1
  fi
  cmp "$dir/r/summary.json" "$dir/summary.before"
  test -f "$dir/r/steps.csv"
  left=$(ls -A "$dir" | grep -v -x -e r -e summary.before || true)
  if [ -n "$left" ]; then
    echo "SIG$sig left: $left" >&2
    exit 1
  fi
  if [ "$(ls -A "$dir/r" | sort | tr '\n' ' ')" != "requests.csv steps.csv summary.json " ]; then
    echo "SIG$sig changed the results: $(ls -A "$dir/r")" >&2
    exit 1
  fi
done
echo x >"$dir/file"
start=$(date +%s)
if "$epsim" run --out "$dir/file" --set workload.num_requests=2000000 >/dev/null 2>"$dir/err"; then
  echo "a file as --out was accepted" >&2
  exit 1
fi
grep -q "exists and is not a directory" "$dir/err"
[ $(( $(date +%s) - start )) -lt 5 ]  # refused before the (long) simulation
echo "interrupted runs leave the previous results whole and nothing else"
