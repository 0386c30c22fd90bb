#!/usr/bin/env bash
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
  "$epsim" sweep "$study" --out "$work/$name" -j 2 --progress none >/dev/null
  "$epsim" report "$work/$name" --out "$work/$name.html" >/dev/null
  bash "$root/scripts/check-report-in-browser.sh" "$work/$name.html"
  echo "example_reports_test: $name: sweep + report + browser check in $(( $(date +%s) - start )) s"
done
