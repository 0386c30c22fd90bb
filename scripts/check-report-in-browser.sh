#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Renders an epsim report in headless Chromium at a laptop's window size and fails unless every figure
# drew marks, the browser logged nothing to its console (a script error, a blocked fetch, a script the
# Content-Security-Policy refused, a Vega warning all count), and the page reads at that width: no figure's
# card scrolls sideways, nor the page; every legend entry is whole and inside its card; no figure is taller
# than a bound.
#   scripts/check-report-in-browser.sh REPORT.html [--window WxH]... [--max-height PX]
#                                      [--screenshot PNG [WIDTHxHEIGHT]]
# --window (repeatable; default 1280x800) sets the window of each check; --max-height defaults to 1200
# (report/vega_specs.hpp: k_figure_max_height_px). The page measures itself once Vega has drawn: one line
# per figure in #epsim-selftest ("figure ID marks N width W height H scroll S legend L hidden K"), a
# "page width W scroll S" line and "done" (report/html_page.cpp); Chromium's --dump-dom gives the page
# after its scripts ran.
set -euo pipefail

usage() {
  echo "usage: $0 REPORT.html [--window WxH]... [--max-height PX] [--screenshot PNG [WIDTHxHEIGHT]]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
report=$1
shift
shot=""
shot_size="1280x2400"
windows=()
max_height=1200
while [ $# -gt 0 ]; do
  case "$1" in
    --window)
      [[ "${2:-}" =~ ^[0-9]+x[0-9]+$ ]] || { echo "check-report: --window needs WIDTHxHEIGHT, e.g. 1280x800" >&2; exit 2; }
      windows+=("$2")
      shift 2
      ;;
    --max-height)
      [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "check-report: --max-height needs a number of pixels" >&2; exit 2; }
      max_height=$2
      shift 2
      ;;
    --screenshot)
      shot=${2:?--screenshot needs a PNG path}
      shift 2
      if [[ "${1:-}" =~ ^[0-9]+x[0-9]+$ ]]; then
        shot_size=$1
        shift
      fi
      ;;
    *) usage ;;
  esac
done
[ ${#windows[@]} -gt 0 ] || windows=("1280x800")
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
expected=$(grep -o '<figure id="fig-' "$report" | wc -l)

status=0
summary=""
for window in "${windows[@]}"; do
  # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  if ! timeout 180 "$browser" "${flags[@]}" --window-size="${window/x/,}" --dump-dom "$url" >"$work/dom.html" \
       2>"$work/stderr"; then
    echo "check-report: $browser failed on $report:" >&2
    grep -v -E "dbus|ScreenSaver|vaapi|sandbox_linux" "$work/stderr" | tail -20 >&2
    exit 1
  fi
  # Console messages of the page: Chromium logs them as "...:INFO:CONSOLE(line)] "text", source: ...".
  if grep -q ":CONSOLE" "$work/stderr"; then
    echo "check-report: at $window the page wrote to the browser console:" >&2
    grep ":CONSOLE" "$work/stderr" | head -20 >&2
    status=1
  fi
  selftest=$(awk '/<pre id="epsim-selftest">/{on=1} on{print} /<\/pre>/{if(on) exit}' "$work/dom.html" |
             sed -e 's/.*<pre id="epsim-selftest">//' -e 's/<\/pre>.*//')
  drawn=0
  widest=0
  tallest=0
  while read -r word id _ marks _ width _ height _ scroll _ legend _ hidden; do
    case "$word" in
      figure)
        if [ "${marks:-0}" -gt 0 ]; then
          drawn=$((drawn + 1))
        else
          echo "check-report: figure $id drew no marks" >&2
          status=1
        fi
        if [ "${scroll:-0}" -gt 0 ]; then
          echo "check-report: at $window figure $id is ${width} px wide: its card scrolls sideways by $scroll px" >&2
          status=1
        fi
        if [ "${hidden:-0}" -gt 0 ]; then
          echo "check-report: at $window figure $id shows $hidden of its $legend legend entries cut off" >&2
          status=1
        fi
        if [ "${height:-0}" -gt "$max_height" ]; then
          echo "check-report: figure $id is $height px tall, more than $max_height" >&2
          status=1
        fi
        [ "${width:-0}" -le "$widest" ] || widest=$width
        [ "${height:-0}" -le "$tallest" ] || tallest=$height
        ;;
      page)
        # "page width W scroll S": read above as id=width _=W marks=scroll _=S.
        page_scroll=$(awk '/^page /{print $5}' <<<"$selftest")
        if [ "${page_scroll:-0}" -gt 0 ]; then
          echo "check-report: at $window the page scrolls sideways by $page_scroll px" >&2
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
    echo "check-report: at $window the page never finished drawing (no \"done\"): $selftest" >&2
    status=1
  fi
  if [ "$drawn" -ne "$expected" ]; then
    echo "check-report: at $window $drawn of $expected figures drew marks" >&2
    status=1
  fi
  summary+="${summary:+; }$window: widest figure $widest px, tallest $tallest px"
done
if [ "$expected" -eq 0 ]; then
  echo "check-report: $report has no figures" >&2
  status=1
fi

if [ -n "$shot" ] && [ $status -eq 0 ]; then
  timeout 180 "$browser" "${flags[@]}" --hide-scrollbars --window-size="${shot_size/x/,}" --screenshot="$shot" "$url" \
    >/dev/null 2>&1
  [ -s "$shot" ] || { echo "check-report: no screenshot written" >&2; status=1; }
fi

if [ $status -eq 0 ]; then
  echo "check-report: $report: $expected figures drawn in $("$browser" --version 2>/dev/null | head -1), console" \
       "clean, none scrolls sideways, every legend entry visible ($summary)"
fi
exit $status
