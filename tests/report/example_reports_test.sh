#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Done means done: each example study under examples/studies/, run as shipped, makes a report that headless
# Chromium draws without a console message and with marks in every figure.
# usage: example_reports_test.sh EPSIM PROJECT_DIR
set -euo pipefail
epsim=$1
root=$(cd "$2" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for study in "$root"/examples/studies/*.toml; do
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
  "$epsim" sweep "$study" --out "$work/$name" -j 2 --progress none >/dev/null
  "$epsim" report "$work/$name" --out "$work/$name.html" >/dev/null
  bash "$root/scripts/check-report-in-browser.sh" "$work/$name.html"
  echo "example_reports_test: $name: sweep + report + browser check in $(( $(date +%s) - start )) s"
done
