#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Reports rendered in a real browser: a small sweep of each kind and a run with --report become one
# report, which headless Chromium must draw with every figure showing marks and a silent console, and which
# must read at a laptop's width (1280x800 and 1400x900: no card scrolling sideways, every legend entry
# visible, no figure taller than 1,200 px); every figure has its SVG (drawn by Vega under Node.js) and CSV.
# A report named like a URL scheme links its figures safely, and the page's CSP runs only its own
# scripts. The checker itself must catch a console error, a figure that fails to draw, a figure too wide
# or too tall, a cut legend, and an injected inline script (refused by the CSP).
# usage: browser_test.sh EPSIM TEST_DATA_DIR CHECKER
set -euo pipefail
epsim=$1
data=$(cd "$2" && pwd)
check=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat > "$work/compare.toml" <<EOT
[study]
kind = "compare"
base = "$data/small.toml"
replications = 2
save_runs = true
[[axis]]
name = "policy"
policies = ["linear", "eplb", "gem"]
[[axis]]
key = "workload.rate_rps"
values = [2.0, 6.0, 12.0]
EOT
# The small scenario with GEM's measured L40 spread: each replication draws the GPUs afresh.
{ grep -v "^speed_factors" "$data/small.toml"; printf '\n[cluster.variability]\npreset = "gem-l40"\n'; } > "$work/small-l40.toml"
cat > "$work/montecarlo.toml" <<EOT
[study]
kind = "montecarlo"
base = "$work/small-l40.toml"
replications = 5
[[axis]]
name = "policy"
policies = ["linear", "gem"]
EOT
cat > "$work/whatif.toml" <<EOT
[study]
kind = "whatif"
base = "$data/small.toml"
replications = 2
[study.max_rate]
target = 0.9
tolerance = 0.25
measured_requests = 40
[[axis]]
name = "setup"
levels = [
  { label = "EP2", set = { cluster.nodes = 1, cluster.speed_factors = [1.0, 0.9], parallel.ep_size = 2 } },
  { label = "EP4", set = { parallel.ep_size = 4 } },
]
EOT
for s in compare montecarlo whatif; do
  "$epsim" sweep "$work/$s.toml" --out "$work/$s" -j 2 --progress none >/dev/null
done
"$epsim" run "$data/small.toml" --set policy.placement=eplb --set parallel.redundant_experts=4 \
  --set policy.rebalance.trigger=periodic --set policy.rebalance.interval_steps=40 --out "$work/run" --report >/dev/null
"$epsim" report "$work/compare" "$work/montecarlo" "$work/whatif" "$work/run" --out "$work/all.html" >/dev/null

bash "$check" "$work/all.html" --window 1280x800 --window 1400x900
bash "$check" "$work/run/report.html"
# The run's report names the run's results directory, not the staging directory it was written in.
grep -qF "&middot; from $work/run</p>" "$work/run/report.html" || { echo "FAIL: run report does not name $work/run"; exit 1; }
if grep -q "epsim-staging" "$work/run/report.html"; then echo "FAIL: run report names its staging directory"; exit 1; fi

# A report named like a scheme (or with a colon, which breaks a link written as is): its links are
# relative ("./", percent-encoded) and each resolves to a file the report wrote; the page draws under its CSP.
for name in "javascript:x" "r-10:00"; do
  "$epsim" report "$work/whatif" --out "$work/$name.html" >/dev/null
  links=$(grep -o 'href="[^#"][^"]*"' "$work/$name.html" | sed -e 's/^href="//' -e 's/"$//')
  [ -n "$links" ] || { echo "FAIL: $name.html links no figure"; exit 1; }
  for h in $links; do
    case "$h" in ./*) ;; *) echo "FAIL: $name.html links $h, not a relative ./ path"; exit 1 ;; esac
    file=$(printf '%b' "${h//%/\\x}")
    [ -f "$work/$file" ] || { echo "FAIL: $name.html links $h, which is no file ($work/$file)"; exit 1; }
  done
done
bash "$check" "$work/javascript:x.html"

# Every figure of the page has its SVG (Vega's own output: marks inside) and its CSV.
figures=$(grep -o '<figure id="fig-[^"]*"' "$work/all.html" | sed -e 's/<figure id="fig-//' -e 's/"$//')
n=0
for f in $figures; do
  svg="$work/all-figures/$f.svg"
  [ -s "$svg" ] || { echo "FAIL: no SVG for figure $f"; exit 1; }
  head -c 4 "$svg" | grep -q "<svg" || { echo "FAIL: $svg is not an SVG"; exit 1; }
  grep -q "role-mark" "$svg" || { echo "FAIL: $svg has no marks"; exit 1; }
  [ -s "$work/all-figures/$f.csv" ] || { echo "FAIL: no CSV for figure $f"; exit 1; }
  n=$((n + 1))
done
# The kinds each contributed their figures.
for f in compare-attainment-vs-rate compare-max-rate compare-latency-cdfs montecarlo-distributions \
         montecarlo-vs-baseline whatif-scaling whatif-max-rate runs-latency-cdfs run-time-series; do
  grep -q "<figure id=\"fig-$f\"" "$work/all.html" || { echo "FAIL: figure $f missing from the report"; exit 1; }
done

# The checker fails on a console message, and an inline script the page did not hash never runs: the CSP
# refuses it (without 'unsafe-inline'), saying so on the console.
sed 's|<pre id="epsim-selftest"></pre>|<pre id="epsim-selftest"></pre><script>console.warn("stray")</script>|' \
  "$work/run/report.html" > "$work/run/noisy.html"
if bash "$check" "$work/run/noisy.html" 2>"$work/noisy.err"; then echo "FAIL: a console message went unnoticed"; exit 1; fi
# (Chromium's wording: "Refused to execute inline script ..." until 2025, "Executing inline script violates ...").
grep -qE "Refused to execute inline script|Executing inline script violates" "$work/noisy.err" ||
  { echo "FAIL: the CSP did not refuse an injected script:"; cat "$work/noisy.err"; exit 1; }
if grep -q '"stray"' "$work/noisy.err"; then echo "FAIL: an injected inline script ran"; exit 1; fi
sed 's|"type":"line"|"type":"no-such-mark"|' "$work/run/report.html" > "$work/run/broken.html"
if bash "$check" "$work/run/broken.html" 2>/dev/null; then echo "FAIL: a broken figure went unnoticed"; exit 1; fi
# ... and on panels wider than the card, legend labels cut short and a figure taller than the bound.
sed -e 's|"update":"270"|"update":"2700"|g' -e 's|"labelLimit":1040|"labelLimit":8|g' "$work/run/report.html" \
  > "$work/run/cramped.html"
if bash "$check" "$work/run/cramped.html" --max-height 200 2>"$work/cramped.err"; then
  echo "FAIL: a cramped page went unnoticed"; exit 1
fi
for what in "scrolls sideways" "legend entries cut off" "px tall, more than 200"; do
  grep -q "$what" "$work/cramped.err" || { echo "FAIL: the checker missed \"$what\":"; cat "$work/cramped.err"; exit 1; }
done
echo "browser_test: $n figures drawn in Chromium, each with its SVG and CSV"
