#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every crafted input of issue 21, run under a 512 MiB address-space cap: each must end in a one-line
# error that names the file (or option) and what was expected, exit non-zero, never crash, hang or
# allocate out of proportion, and leave nothing in its output directory (no results, no temp files).
#   resource_limits_test.sh EPSIM SOURCE_DIR
set -uo pipefail
epsim=$(realpath "$1")
src=$(realpath "$2")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
demo="$src/examples/demo.toml"
failures=0

# case NAME EXPECTED-SUBSTRING -- COMMAND...: runs COMMAND capped, in $dir/out's parent, and checks it.
case_() {
  local name=$1 expected=$2
  shift 3
  rm -rf "$dir/out" && mkdir -p "$dir/work"
  local rc=0
  (ulimit -v 524288; cd "$dir/work" && timeout 60 "$@") >"$dir/stdout" 2>"$dir/stderr" || rc=$?
  local err
  err=$(cat "$dir/stderr")
  local why=""
  if [ "$rc" -eq 0 ]; then why="exit 0"; fi
  if [ "$rc" -ge 124 ]; then why="killed or timed out (rc $rc)"; fi
  if [ "$(wc -l <"$dir/stderr")" -ne 1 ]; then why="$why; not a one-line error"; fi
  case "$err" in *"$expected"*) ;; *) why="$why; missing \"$expected\"";; esac
  if [ -e "$dir/out" ]; then why="$why; left $dir/out"; fi
  local stray
  stray=$(find "$dir" -name '*.tmp*' -o -name '.*epsim-staging*' | head -3)
  if [ -n "$stray" ]; then why="$why; left $stray"; fi
  if [ -n "$why" ]; then
    echo "FAIL $name:$why"
    echo "  stderr: $err"
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

python3 -c "print('a' + '.a' * 40000 + ' = 1')" >"$dir/deep.toml"
case_ "40,000-level dotted key in a file" "deep.toml: line 1: a dotted key nests more than 64 levels" -- \
  "$epsim" run "$dir/deep.toml" --out "$dir/out"
case_ "40,000-level dotted key in --set" "--set: line 1: a dotted key nests" -- \
  "$epsim" run "$demo" --set "$(python3 -c "print('a' + '.a' * 40000 + '=1')")" --out "$dir/out"
case_ "GPU of 1e-300 GB/s" "gpu.hbm_gbps: expected a number in [0.001, 10000000], got 1e-300" -- \
  "$epsim" run "$demo" --set policy.placement=gem --set gpu.hbm_gbps=1e-300 --out "$dir/out"
case_ "max_sim_time_s = 1e10" "run.max_sim_time_s: expected a number in (0, 1000000000]" -- \
  "$epsim" run "$demo" --set run.max_sim_time_s=1e10 --out "$dir/out"
case_ "duration_s = inf" "workload.duration_s: expected a finite number" -- \
  "$epsim" run "$demo" --set workload.duration_s=inf --out "$dir/out"
case_ "--seed -1" "--seed: expected a whole number in [0, 9223372036854775807]" -- \
  "$epsim" run "$demo" --seed -1 --out "$dir/out"
case_ "cost --experts-active 1e9" "--experts-active and --local-experts must be in [0, 65536]" -- \
  "$epsim" cost --gpu h100 --model mixtral-8x7b --experts-active 1000000000
printf '0.5,9223372036854775807,10\n' >"$dir/replay.csv"
case_ "replayed prompt of 2^63-1 tokens" "replay.csv: line 1: prompt_tokens and output_tokens must be in [1, 4194304]" -- \
  "$epsim" run "$demo" --set workload.arrival=replay --set "workload.replay_file=\"$dir/replay.csv\"" --out "$dir/out"
printf 'EPSIMRT1\xff\xff\xff\xff\x7f' >"$dir/corrupt.trace"
case_ "13-byte trace claiming 34 GB" "corrupt.trace: step 0: a 34359738367-byte message at byte 13 but only 0 bytes" -- \
  "$epsim" trace stats "$dir/corrupt.trace"
printf '{"experts": -1, "top_k": 2, "steps": [{"layers": [[[0, 1]]]}]}' >"$dir/dump.json"
case_ "JSON trace with experts = -1" "dump.json: \"experts\": expected a whole number in [1, 65536], got -1" -- \
  "$epsim" trace convert "$dir/dump.json" "$dir/out"
printf 'step,layer,expert,tokens\n0,0,0,5000000000\n' >"$dir/big.csv"
case_ "CSV count above 2^32" "big.csv: line 2: 5000000000 tokens for one expert" -- \
  "$epsim" trace convert "$dir/big.csv" "$dir/out" --layers 1 --experts 8 --top-k 1
case_ "trace convert --layers 200000" "--layers: expected a whole number in [1, 4096]" -- \
  "$epsim" trace convert "$dir/big.csv" "$dir/out" --layers 200000 --experts 8 --top-k 1
printf '1e8,0,5\n' >"$dir/load.csv"
case_ "one-line load CSV 1e8,0,5" "load.csv: line 1: expected layer < 4096, expert < 65536" -- \
  "$epsim" place --policy eplb --gpus 2 --load "$dir/load.csv" --out "$dir/out"
printf '0,0,1e308\n0,0,1e308\n0,1,5\n' >"$dir/inf.csv"
case_ "load CSV whose tokens sum to infinity" "inf.csv: line 2: layer 0, expert 0: the tokens sum past the largest" -- \
  "$epsim" place --policy eplb --gpus 2 --load "$dir/inf.csv" --out "$dir/out"
# Endless inputs (/dev/zero as a file): bounded reads end them, not the memory cap.
case_ "/dev/zero replayed" "/dev/zero: line 1 is longer than 1048576 bytes" -- \
  "$epsim" run "$demo" --set workload.arrival=replay --set 'workload.replay_file="/dev/zero"' --out "$dir/out"
ln -s /dev/zero "$dir/zero.csv"
case_ "/dev/zero as a CSV trace" "zero.csv: line 1 is longer than 1048576 bytes" -- \
  "$epsim" trace convert "$dir/zero.csv" "$dir/out" --layers 1 --experts 8 --top-k 1
: >"$dir/empty.csv"
case_ "replay file without rows" "empty.csv: no arrival rows" -- \
  "$epsim" run "$demo" --set workload.arrival=replay --set "workload.replay_file=\"$dir/empty.csv\"" --out "$dir/out"
touch "$dir/file"
case_ "--out is a file" "file: exists and is not a directory" -- \
  "$epsim" run "$demo" --out "$dir/file"
case_ "--out under a file" "file for the results: Not a directory" -- \
  "$epsim" run "$demo" --out "$dir/file/sub"

if [ "$failures" -gt 0 ]; then
  echo "$failures crafted input(s) not handled"
  exit 1
fi
echo "every crafted input ends in a one-line error under a 512 MiB cap, leaving nothing behind"
