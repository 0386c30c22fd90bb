#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Done means done: each example study under examples/studies/ makes a report that headless Chromium draws
# without a console message and with marks in every figure.
# usage: example_reports_test.sh EPSIM PROJECT_DIR full|reduced [STUDY...]
#   full     the studies as shipped (CTest label `full`: ~10 min on 2 cores, run by CI on its own)
#   reduced  the same axes, policies and figures with 2 replications and a quarter of each run's
#            duration or requests (CTest `example_report_<study>`, label slow: the README's test command)
# STUDY names (file stems) pick studies; none: every study.
set -euo pipefail
epsim=$1
root=$(cd "$2" && pwd)
size=$3
shift 3
case "$size" in full | reduced) ;; *) echo "example_reports_test: size must be full or reduced, got '$size'" >&2; exit 2 ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
studies=()
if [ $# -eq 0 ]; then
  studies=("$root"/examples/studies/*.toml)
else
  for name in "$@"; do studies+=("$root/examples/studies/$name.toml"); done
fi
for study in "${studies[@]}"; do
  test -f "$study" || { echo "example_reports_test: no study $study" >&2; exit 2; }
  name=$(basename "$study" .toml)
  start=$(date +%s)
  if [ "$name" = whatif-ep-sizes ]; then
    # As shipped, each of its 12 runs also searches its max sustainable rate with probe windows of at least
    # twice the cluster's seats (8-9k requests on EP64/EP72): ~45 min on 2 cores, too long for CI. The test
    # draws it without the search (the same setups, loads and figures; the objective on goodput per GPU);
    # the search's figures are drawn by report_in_browser's small sweeps.
    python3 - "$study" "$work/$name.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text = re.sub(r"\n\[study\.max_rate\]\n(?:[^\[\n][^\n]*\n|\n)*", "\n", text)
text = text.replace('maximize = "max_rate_rps_per_gpu"', 'maximize = "goodput_rps_per_gpu"')
text = text.replace(', "max_rate_rps", "max_rate_rps_per_gpu"]', "]")
assert "max_rate" not in text, "whatif-ep-sizes.toml changed: update example_reports_test.sh"
open(sys.argv[2], "w").write(text)
PY
    study=$work/$name.toml
  fi
  if [ "$size" = reduced ]; then
    python3 - "$study" "$work/$name.reduced.toml" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
text, n_rep = re.subn(r"(?m)^replications = \d+", "replications = 2", text)
quarter = lambda m: "duration_s = %g" % (float(m.group(1)) / 4)
text, n_dur = re.subn(r"(?m)^duration_s = ([0-9.]+)", quarter, text)
# A study sized by a request count instead (rebalance.toml: a closed batch) keeps a quarter of it.
quarter_requests = lambda m: "num_requests = %d" % max(1, int(m.group(1)) // 4)
text, n_req = re.subn(r"(?m)^num_requests = ([1-9][0-9]*)", quarter_requests, text)
assert n_rep == 1 and n_dur + n_req == 1, "study changed shape: update example_reports_test.sh's reduction"
open(sys.argv[2], "w").write(text)
PY
    study=$work/$name.reduced.toml
  fi
  "$epsim" sweep "$study" --out "$work/$name" -j 2 --progress none >/dev/null
  "$epsim" report "$work/$name" --out "$work/$name.html" >/dev/null
  bash "$root/scripts/check-report-in-browser.sh" "$work/$name.html"
  echo "example_reports_test: $name ($size): sweep + report + browser check in $(( $(date +%s) - start )) s"
done
