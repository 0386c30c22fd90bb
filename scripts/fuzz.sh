#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fuzzes epsim's parsers and importers with libFuzzer (fuzz/, ASan + UBSan, Clang 15): builds the harnesses
# of the `asan` preset (the same build as the sanitizer tests), then runs each harness over its seed corpus
# (fuzz/corpus/NAME: every past finding stays there as a regression input) and fuzzes it for a bounded
# time or number of runs, at most 512 MiB of memory per input. New interesting inputs go to
# build/asan/fuzz/corpus/NAME (not committed); a crash, leak, timeout or memory blow-up stops with its
# reproducer in build/asan/fuzz/artifacts/NAME/ and exit status 1.
#   scripts/fuzz.sh                      # every harness, 30 s each (CI: 10 s)
#   scripts/fuzz.sh --seconds 3600       # longer
#   scripts/fuzz.sh --runs 10000000      # a fixed number of executions per harness (an overnight run)
#   scripts/fuzz.sh --seconds 60 trace   # one harness
# Harnesses: config (TOML text and [workload]), experiment (a whole config with --set overrides), trace
# (binary routing traces), trace_csv and trace_json (trace convert's importers), replay (arrival replay
# CSV), request_trace (Mooncake, Azure and BurstGPT request traces), sharegpt (ShareGPT conversation files
# as sessions), place (place's load, co-selection, cost-curve and load-history files), calibration (the
# measurement table and every calibrate importer), engines (routing importers, placement files, .npy, safetensors),
# study (study files and their plans), report (a report's study or run inputs, built and rendered),
# journal (a sweep's journal and a shared directory's manifest, as the writers read them back).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time=30)
harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) limit=(-max_total_time="$2"); shift 2 ;;
    --runs) limit=(-runs="$2"); shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d'; exit 0 ;;  # the header comment
    *) harnesses+=("$1"); shift ;;
  esac
done
if [ ${#harnesses[@]} -eq 0 ]; then
  # Every harness in fuzz/ (one fuzz_NAME.cpp each), so a new one is never left out.
  for src in fuzz/fuzz_*.cpp; do
    name=${src#fuzz/fuzz_}
    harnesses+=("${name%.cpp}")
  done
fi
# Stack traces with function names and lines (the sanitizers look for llvm-symbolizer by that name only).
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
  for s in llvm-symbolizer-15 llvm-symbolizer; do
    if command -v "$s" >/dev/null; then
      export ASAN_SYMBOLIZER_PATH UBSAN_SYMBOLIZER_PATH
      ASAN_SYMBOLIZER_PATH=$(command -v "$s")
      UBSAN_SYMBOLIZER_PATH=$ASAN_SYMBOLIZER_PATH
      break
    fi
  done
fi
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
cmake --preset asan >/dev/null
cmake --build --preset asan --target fuzz_all
status=0
summary=()
for h in "${harnesses[@]}"; do
  bin=build/asan/fuzz/fuzz_$h
  work=build/asan/fuzz/corpus/$h
  artifacts=build/asan/fuzz/artifacts/$h
  mkdir -p "$work" "$artifacts"
  dict=()
  if [ "$h" = config ] || [ "$h" = experiment ]; then
    dict=(-dict=fuzz/toml.dict)
  fi
  log=build/asan/fuzz/$h.log
  echo "== fuzz_$h: ${limit[*]}"
  if "$bin" "${limit[@]}" "${dict[@]}" -rss_limit_mb=512 -max_len=4096 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$work" "fuzz/corpus/$h" >"$log" 2>&1; then
    result="no failure"
  else
    status=1
    result="FAILURE: reproducer in $artifacts/"
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -10
    echo "fuzz_$h found a failure: reproducer in $artifacts/ (add it to fuzz/corpus/$h/ once fixed); log $log"
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  per_s=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "$work" -type f | wc -l)
  line=$(printf '%-12s %12s executions %7s/s  corpus %6s  %s' "$h" "${runs:-?}" "${per_s:-?}" "$corpus" "$result")
  echo "$line"
  summary+=("$line")
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
