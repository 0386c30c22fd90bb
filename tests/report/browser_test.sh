#!/usr/bin/env bash
# Reports rendered in a real browser: a small sweep of each kind and a run with --report become one
# report, which headless Chromium must draw with every figure showing marks and a silent console; every
# figure has its SVG (drawn by Vega under Node.js) and CSV. The checker itself must catch a console error
# and a figure that fails to draw.
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

bash "$check" "$work/all.html"
bash "$check" "$work/run/report.html"

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

# The checker fails on a console message and on a figure that cannot draw.
sed 's|<pre id="epsim-selftest"></pre>|<pre id="epsim-selftest"></pre><script>console.warn("stray")</script>|' \
  "$work/all.html" > "$work/noisy.html"
if bash "$check" "$work/noisy.html" 2>/dev/null; then echo "FAIL: a console message went unnoticed"; exit 1; fi
sed 's|"type":"line"|"type":"no-such-mark"|' "$work/all.html" > "$work/broken.html"
if bash "$check" "$work/broken.html" 2>/dev/null; then echo "FAIL: a broken figure went unnoticed"; exit 1; fi
echo "browser_test: $n figures drawn in Chromium, each with its SVG and CSV"
