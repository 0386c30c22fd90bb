#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Outputs appear whole or not at all, and epsim removes only what it wrote (issue 35):
#  1. SIGKILL at random points of sweeps that write two different result sets into one --out, and SIGTERM
#     at random points of reports that write two different reports to one name: every surviving set is
#     one whole set (byte for byte a reference), never new files beside old ones;
#  2. a second sweep into a running sweep's --out fails at once naming the holder's PID, and the first one
#     finishes; only a dead writer's temporary files are removed, never below --out's own level;
#  3. a report keeps the user's own files in its figures folder and refuses a symlinked one;
#  4. single-file outputs refuse what is not a regular file (FIFO, symlink, dangling symlink, directory),
#     before any simulation, leaving it as it was;
#  5. a FIFO as a report input and a hanging EPSIM_NODE end in an error, not a hang.
# usage: outputs_test.sh EPSIM TEST_DATA_DIR [KILLS]
set -euo pipefail
epsim=$1
data=$(cd "$2" && pwd)
kills=${3:-40}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
# Sleeps a random number of milliseconds in [$1 / 2, $1 * 9 / 8): the second half of an uninterrupted
# invocation's span and a little past it, where a set is written (a process's start and its planning come
# first).
random_sleep() {
  local ms=$(($1 / 2 + RANDOM % ($1 * 5 / 8 + 1)))
  sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
}
study() {  # study NAME RATES
  cat > "$work/$1.toml" <<EOT
[study]
kind = "grid"
base = "$data/small.toml"
save_runs = true
[[axis]]
key = "workload.rate_rps"
values = [$2]
EOT
}
study a "2.0, 4.0"
study b "3.0, 6.0, 9.0"
set_files="runs.csv points.csv study.json"

# References: each study alone; then both into one directory, so its journal holds every run.
for s in a b; do
  "$epsim" sweep "$work/$s.toml" --out "$work/ref-$s" --progress none > /dev/null 2>&1
done
"$epsim" sweep "$work/a.toml" --out "$work/mixed" --progress none > /dev/null 2>&1
"$epsim" sweep "$work/b.toml" --out "$work/mixed" --progress none > /dev/null 2>&1

# Which reference the set in $1 is, byte for byte ("a", "b"), or "mixed". study.json differs in its wall and CPU
# times and its count of reused runs, so it is compared without those.
strip_times() { grep -v -e 'wall_s' -e 'cpu_s' -e '"reused_runs"' "$1"; }
which_set() {
  local dir=$1 s f same
  for s in a b; do
    same=yes
    for f in runs.csv points.csv; do
      cmp -s "$dir/$f" "$work/ref-$s/$f" || same=no
    done
    [ "$(strip_times "$dir/study.json")" = "$(strip_times "$work/ref-$s/study.json")" ] || same=no
    for f in "$work/ref-$s/runs"/*/summary.json; do
      cmp -s "$f" "$dir/runs/$(basename "$(dirname "$f")")/summary.json" || same=no
    done
    [ "$(ls "$dir/runs" | wc -l)" = "$(ls "$work/ref-$s/runs" | wc -l)" ] || same=no
    if [ $same = yes ]; then
      echo "$s"
      return
    fi
  done
  echo mixed
}
[ "$(which_set "$work/mixed")" = b ] || fail "a finished sweep's set is not its reference"

# The shortest of three uninterrupted invocations' spans, in ms.
span_of() {
  local best=1000000 start ms
  for _ in 1 2 3; do
    start=$(date +%s%N)
    "$@" > /dev/null 2>&1
    ms=$((($(date +%s%N) - start) / 1000000 + 2))
    [ $ms -lt $best ] && best=$ms
  done
  echo $best
}

# 1a. SIGKILL at random points of sweeps that only write their set (every run is in the journal).
span_ms=$(span_of "$epsim" sweep "$work/a.toml" --out "$work/mixed" --progress none)
interrupted=0
for i in $(seq 1 "$kills"); do
  s=a
  [ $((i % 2)) = 0 ] && s=b
  "$epsim" sweep "$work/$s.toml" --out "$work/mixed" --progress none > /dev/null 2>&1 &
  pid=$!
  random_sleep "$span_ms"
  kill -9 "$pid" 2> /dev/null && interrupted=$((interrupted + 1))
  wait "$pid" 2> /dev/null || true
  got=$(which_set "$work/mixed")
  [ "$got" != mixed ] || fail "SIGKILL $i left a mixed result set in $(ls -a "$work/mixed" | tr '\n' ' ')"
done
echo "sweeps: $kills SIGKILLs ($interrupted before the sweep ended, span ${span_ms} ms): every set whole"
"$epsim" sweep "$work/a.toml" --out "$work/mixed" --progress none > /dev/null 2>&1
[ "$(which_set "$work/mixed")" = a ] || fail "the sweep after the kills did not write its set"
leftovers=$(find "$work" -maxdepth 1 -name '.mixed.epsim-staging-*'; find "$work/mixed" -maxdepth 2 -name '*.tmp-*')
[ -z "$leftovers" ] || fail "a killed sweep's staging or temporary files were not removed: $leftovers"

# 1b. SIGTERM at random points of reports of the two studies to one name (no SVG: no Node.js needed).
mkdir -p "$work/in-a" "$work/in-b" "$work/ref-report-a" "$work/ref-report-b" "$work/rep"
cp -r "$work/ref-a" "$work/in-a/study"
cp -r "$work/ref-b" "$work/in-b/study"
for s in a b; do
  "$epsim" report "$work/in-$s/study" --out "$work/ref-report-$s/report.html" --no-svg > /dev/null
done
which_report() {
  local s f same
  for s in a b; do
    same=yes
    cmp -s "$work/rep/report.html" "$work/ref-report-$s/report.html" || same=no
    for f in "$work/ref-report-$s/report-figures"/*; do
      cmp -s "$f" "$work/rep/report-figures/$(basename "$f")" || same=no
    done
    [ "$(ls "$work/rep/report-figures" | wc -l)" = "$(ls "$work/ref-report-$s/report-figures" | wc -l)" ] || same=no
    if [ $same = yes ]; then
      echo "$s"
      return
    fi
  done
  echo mixed
}
span_ms=$(span_of "$epsim" report "$work/in-b/study" --out "$work/rep/report.html" --no-svg)
[ "$(which_report)" = b ] || fail "a finished report is not its reference"
interrupted=0
for i in $(seq 1 "$kills"); do
  s=a
  [ $((i % 2)) = 0 ] && s=b
  "$epsim" report "$work/in-$s/study" --out "$work/rep/report.html" --no-svg > /dev/null 2>&1 &
  pid=$!
  random_sleep "$span_ms"
  kill -TERM "$pid" 2> /dev/null && interrupted=$((interrupted + 1))
  wait "$pid" 2> /dev/null || true
  [ "$(which_report)" != mixed ] || fail "SIGTERM $i left new figures beside an old page (or the reverse)"
done
echo "reports: $kills SIGTERMs ($interrupted before the report ended, span ${span_ms} ms): every page and figures whole"
leftovers=$(find "$work/rep" -name '*.tmp-*' -o -name '*.epsim-staging-*')
[ -z "$leftovers" ] || fail "an interrupted report left files behind: $leftovers"

# 2. The lock: a second sweep into a running sweep's --out fails at once; the first finishes.
cat > "$work/slow.toml" <<EOT
[study]
kind = "grid"
base = "$data/small.toml"
[[axis]]
key = "workload.num_requests"
values = [1500, 1501, 1502, 1503]
EOT
mkdir -p "$work/locked/user"
sleep 1000 &
alive=$!
: > "$work/locked/x.csv.tmp-$alive"               # a running process's temporary file
: > "$work/locked/user/data.tmp-2147483547"       # the user's own, below --out
"$epsim" sweep "$work/slow.toml" --out "$work/locked" --progress none > /dev/null 2> "$work/first.err" &
first=$!
for _ in $(seq 1 200); do
  [ -s "$work/locked/.epsim-sweep.lock" ] && break
  sleep 0.02
done
if "$epsim" sweep "$work/slow.toml" --out "$work/locked" --progress none > /dev/null 2> "$work/second.err"; then
  fail "a second sweep into a running sweep's --out was let in"
fi
grep -q "in use by another epsim sweep (PID $first)" "$work/second.err" || fail "second sweep: $(cat "$work/second.err")"
wait "$first" || fail "the first sweep failed: $(cat "$work/first.err")"
[ "$(wc -l < "$work/locked/runs.csv")" = 5 ] || fail "the first sweep's runs.csv is not whole"
[ -f "$work/locked/x.csv.tmp-$alive" ] || fail "a running process's temporary file was removed"
[ -f "$work/locked/user/data.tmp-2147483547" ] || fail "a file below --out was removed"
kill "$alive"
echo "lock: the second sweep refused with the holder's PID; only own temporaries removed"

# 3. A report keeps the user's own figures and refuses a symlinked figures folder.
echo "<svg>mine</svg>" > "$work/rep/report-figures/mine.svg"
echo "x,y" > "$work/rep/report-figures/mine.csv"
"$epsim" report "$work/in-a/study" --out "$work/rep/report.html" --no-svg > /dev/null
[ -f "$work/rep/report-figures/mine.svg" ] && [ -f "$work/rep/report-figures/mine.csv" ] ||
  fail "the report removed the user's own figures"
mkdir -p "$work/elsewhere"
echo keep > "$work/elsewhere/a.svg"
ln -s "$work/elsewhere" "$work/rep/linked-figures"
if "$epsim" report "$work/in-a/study" --out "$work/rep/linked.html" --no-svg > /dev/null 2> "$work/linked.err"; then
  fail "a symlinked figures folder was written through"
fi
grep -q "symbolic link" "$work/linked.err" || fail "symlinked figures: $(cat "$work/linked.err")"
[ "$(cat "$work/elsewhere/a.svg")" = keep ] && [ ! -e "$work/rep/linked.html" ] || fail "the link's target changed"
echo "report: the user's figures kept, a symlinked figures folder refused"

# 4. Single-file outputs that are not regular files are refused before any work, and left as they were.
mkfifo "$work/fifo"
mkdir -p "$work/adir"
ln -s "$work/nowhere" "$work/dangling"
ln -s "$work/target.csv" "$work/link"
echo target > "$work/target.csv"
refused() {  # refused WHAT COMMAND...: exit 1, one line naming the kind, nothing printed on stdout
  local what=$1
  shift
  local rc=0
  timeout 20 "$epsim" "$@" > "$work/refused.out" 2> "$work/refused.err" || rc=$?
  [ $rc = 1 ] || fail "$* exited $rc: $(cat "$work/refused.err")"
  grep -q "$what" "$work/refused.err" || fail "$*: $(cat "$work/refused.err")"
  [ ! -s "$work/refused.out" ] || fail "$* did work before refusing its output: $(head -3 "$work/refused.out")"
}
refused "is a symbolic link" slo "$data/small.toml" --out "$work/dangling"
refused "is a FIFO" slo "$data/small.toml" --out "$work/fifo"
refused "is a symbolic link" run "$data/small.toml" --out "$work/dangling"
refused "is a symbolic link" trace gen "$data/small.toml" --out "$work/link"
refused "is a FIFO" place --policy eplb --load "$work/none.csv" --out "$work/fifo"
refused "is a directory" calibrate import vllm_moe "$work/none.json" --out "$work/adir"
mkfifo "$work/fifo.html"
refused "is a FIFO" report "$work/in-a/study" --out "$work/fifo.html" --no-svg
[ -p "$work/fifo" ] && [ -p "$work/fifo.html" ] && [ -L "$work/dangling" ] && [ ! -e "$work/nowhere" ] &&
  [ "$(cat "$work/target.csv")" = target ] && [ -d "$work/adir" ] || fail "a refused output was changed"
echo "single-file outputs: FIFO, links and directories refused before any work"

# 5. A FIFO as a report input, a hanging Node.js: an error each, not a hang.
cp -r "$work/ref-a" "$work/fifo-study"
rm "$work/fifo-study/points.csv"
mkfifo "$work/fifo-study/points.csv"
refused "points.csv: is a FIFO" report "$work/fifo-study" --out "$work/f.html" --no-svg
printf '#!/bin/sh\nexec sleep 1000\n' > "$work/hang.sh"
chmod +x "$work/hang.sh"
t0=$(date +%s)
export EPSIM_NODE="$work/hang.sh" EPSIM_NODE_TIMEOUT_S=1
refused "no answer within 1 s" report "$work/in-a/study" --out "$work/h.html"
unset EPSIM_NODE EPSIM_NODE_TIMEOUT_S
[ $(($(date +%s) - t0)) -lt 10 ] || fail "the hanging Node.js was waited for too long"
[ ! -e "$work/h.html" ] || fail "a failed report wrote its page"
echo "report inputs: a FIFO refused, a hanging Node.js stopped after its bound"
echo OK
