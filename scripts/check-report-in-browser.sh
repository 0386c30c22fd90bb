#!/usr/bin/env bash
# Renders an epsim report in headless Chromium and fails unless every figure drew marks and the browser
# logged nothing to its console (a script error, a blocked fetch, a Vega warning all count).
#   scripts/check-report-in-browser.sh REPORT.html [--screenshot PNG [WIDTHxHEIGHT]]
# The page writes one line per figure into #epsim-selftest once Vega has drawn it ("figure ID marks N")
# and "done" at the end (report/html_page.cpp); Chromium's --dump-dom gives the page after its scripts ran.
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 REPORT.html [--screenshot PNG [WIDTHxHEIGHT]]" >&2
  exit 2
fi
report=$1
shift
shot=""
size="1400x2600"
if [ "${1:-}" = "--screenshot" ]; then
  shot=${2:?--screenshot needs a PNG path}
  size=${3:-$size}
fi
[ -f "$report" ] || { echo "check-report: $report: no such file" >&2; exit 2; }

browser=${EPSIM_CHROMIUM:-}
if [ -z "$browser" ]; then
  for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
  done
fi
[ -n "$browser" ] || { echo "check-report: no Chromium (Debian: apt install chromium; or set EPSIM_CHROMIUM)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
url="file://$(realpath "$report")"
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --no-default-browser-check --disable-extensions
       --user-data-dir="$work/profile" --enable-logging=stderr --v=0 --virtual-time-budget=60000)

# --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
if ! timeout 180 "$browser" "${flags[@]}" --dump-dom "$url" >"$work/dom.html" 2>"$work/stderr"; then
  echo "check-report: $browser failed on $report:" >&2
  grep -v -E "dbus|ScreenSaver|vaapi|sandbox_linux" "$work/stderr" | tail -20 >&2
  exit 1
fi

status=0
# Console messages of the page: Chromium logs them as "...:INFO:CONSOLE(line)] "text", source: ...".
if grep -q ":CONSOLE" "$work/stderr"; then
  echo "check-report: the page wrote to the browser console:" >&2
  grep ":CONSOLE" "$work/stderr" | head -20 >&2
  status=1
fi

selftest=$(awk '/<pre id="epsim-selftest">/{on=1} on{print} /<\/pre>/{if(on) exit}' "$work/dom.html" |
           sed -e 's/.*<pre id="epsim-selftest">//' -e 's/<\/pre>.*//')
expected=$(grep -o '<figure id="fig-' "$report" | wc -l)
drawn=0
while read -r word id _ marks; do
  case "$word" in
    figure)
      if [ "${marks:-0}" -gt 0 ]; then
        drawn=$((drawn + 1))
      else
        echo "check-report: figure $id drew no marks" >&2
        status=1
      fi
      ;;
    error)
      echo "check-report: page error: $id $marks" >&2
      status=1
      ;;
  esac
done <<<"$selftest"
if ! grep -qx "done" <<<"$selftest"; then
  echo "check-report: the page never finished drawing (no \"done\"): $selftest" >&2
  status=1
fi
if [ "$expected" -eq 0 ]; then
  echo "check-report: $report has no figures" >&2
  status=1
fi
if [ "$drawn" -ne "$expected" ]; then
  echo "check-report: $drawn of $expected figures drew marks" >&2
  status=1
fi

if [ -n "$shot" ] && [ $status -eq 0 ]; then
  timeout 180 "$browser" "${flags[@]}" --hide-scrollbars --window-size="${size/x/,}" --screenshot="$shot" "$url" \
    >/dev/null 2>&1
  [ -s "$shot" ] || { echo "check-report: no screenshot written" >&2; status=1; }
fi

if [ $status -eq 0 ]; then
  echo "check-report: $report: $drawn figures drawn in $("$browser" --version 2>/dev/null | head -1), console clean"
fi
exit $status
