#!/usr/bin/env bash
# Fuzzes epsim's parsers with libFuzzer (fuzz/, ASan + UBSan, Clang 15): builds the `fuzz` preset, then
# runs each harness over its seed corpus (fuzz/corpus/NAME: every past finding stays there as a
# regression input) and fuzzes it for a bounded time or number of runs, at most 512 MiB of memory per
# input. New interesting inputs go to build/fuzz/corpus/NAME (not committed); a crash, leak, timeout or
# memory blow-up stops with its reproducer in build/fuzz/artifacts/NAME/ and exit status 1.
#   scripts/fuzz.sh                      # every harness, 30 s each (CI)
#   scripts/fuzz.sh --seconds 3600       # longer
#   scripts/fuzz.sh --runs 10000000      # a fixed number of executions per harness (an overnight run)
#   scripts/fuzz.sh --seconds 60 trace   # one harness
# Harnesses: config (TOML config text and [workload]), trace (binary routing traces), trace_csv and
# trace_json (trace convert's importers), replay (arrival replay CSV).
set -euo pipefail
cd "$(dirname "$0")/.."
limit=(-max_total_time=30)
harnesses=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) limit=(-max_total_time="$2"); shift 2 ;;
    --runs) limit=(-runs="$2"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
if [ ${#harnesses[@]} -eq 0 ]; then
  harnesses=(config trace trace_csv trace_json replay)
fi
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz
status=0
for h in "${harnesses[@]}"; do
  bin=build/fuzz/fuzz/fuzz_$h
  work=build/fuzz/corpus/$h
  artifacts=build/fuzz/artifacts/$h
  mkdir -p "$work" "$artifacts"
  dict=()
  if [ "$h" = config ]; then
    dict=(-dict=fuzz/toml.dict)
  fi
  log=build/fuzz/$h.log
  echo "== fuzz_$h: ${limit[*]}"
  if "$bin" "${limit[@]}" "${dict[@]}" -rss_limit_mb=512 -max_len=4096 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts/" "$work" "fuzz/corpus/$h" >"$log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^Done" "$log" | tail -2
  else
    status=1
    grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -10
    echo "fuzz_$h found a failure: reproducer in $artifacts/ (add it to fuzz/corpus/$h/ once fixed); log $log"
  fi
done
exit $status
