#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates the tables of docs/studies.md's "The example studies" from the example sweeps' outputs, so
# the documented findings cannot go stale. Each generated block is
#   <!-- BEGIN generated: study-findings NAME -->
#   ...the table formatted from DIR/NAME/{points,max_rate}.csv...
#   <!-- END generated -->
# and the prose outside the blocks is kept as written (re-read it against the new tables).
#   scripts/gen-study-findings.sh DIR            tables from DIR/whatif-ep-sizes, DIR/compare-policies,
#                                                DIR/montecarlo-variability, DIR/whatif-kimi-k2-gb300
#                                                (epsim sweep outputs; a study DIR lacks keeps its block)
#   scripts/gen-study-findings.sh --run DIR [EPSIM] [STUDY...]   first runs the sweeps (all, or the
#                                                STUDY names) into DIR (-j 2, each wall time in
#                                                DIR/NAME.wall_s), then the tables
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
run=0
if [ "${1:-}" = "--run" ]; then
  run=1
  shift
fi
[ $# -ge 1 ] || { echo "usage: gen-study-findings.sh [--run] DIR [EPSIM]" >&2; exit 2; }
dir=$1
epsim=${2:-$root/build/release/epsim}
studies=(whatif-ep-sizes compare-policies montecarlo-variability whatif-kimi-k2-gb300)
if [ $# -ge 3 ]; then
  studies=("${@:3}")
fi

if [ $run = 1 ]; then
  [ -x "$epsim" ] || { echo "gen-study-findings: no epsim binary at $epsim" >&2; exit 2; }
  mkdir -p "$dir"
  for s in "${studies[@]}"; do
    start=$(date +%s)
    "$epsim" sweep "$root/examples/studies/$s.toml" --out "$dir/$s" -j 2 --progress none
    echo $(($(date +%s) - start)) >"$dir/$s.wall_s"
  done
fi
found=0
for s in "${studies[@]}"; do
  if [ -f "$dir/$s/points.csv" ]; then found=1; else echo "gen-study-findings: no $dir/$s/points.csv: its block is kept" >&2; fi
done
[ $found = 1 ] || { echo "gen-study-findings: no study outputs in $dir (run the sweeps, or --run)" >&2; exit 2; }

python3 - "$root/docs/studies.md" "$dir" <<'PY'
import csv, os, re, sys

doc, out = sys.argv[1], sys.argv[2]

def rows(name, f):
    with open(os.path.join(out, name, f), newline="") as h:
        return list(csv.DictReader(h))

def wall(name):
    p = os.path.join(out, name + ".wall_s")
    return open(p).read().strip() + " s" if os.path.exists(p) else "(wall time not recorded)"

def g(x, digits=3):
    return "-" if x in ("", None) else f"{float(x):.{digits}g}"

def ci(r, lo="ci95_low", hi="ci95_high", digits=3):
    if r.get(lo, "") == "" or r.get(hi, "") == "":
        return g(r["mean" if "mean" in r else "max_rate_rps"], digits)
    key = "mean" if "mean" in r else "max_rate_rps"
    return f"{g(r[key], digits)} [{g(r[lo], digits)}, {g(r[hi], digits)}]"

def pct(x):
    return "-" if x in ("", None) else f"{100 * float(x):.0f} %"

def by_point(points, axis):
    d = {}
    for r in points:
        d.setdefault(r[axis], {})[r["metric"]] = r
    return d

def whatif():
    name = "whatif-ep-sizes"
    p = by_point(rows(name, "points.csv"), "setup")
    lines = [f"Wall time {wall(name)}. Mean [95 % interval] over replications (points.csv).", "",
             "| setup | max rate, req/s | per GPU | p90 TPOT at offered load, ms | attainment at offered load | "
             "at the search's first missed rate: seats / batch tokens / KV bound |",
             "| --- | --- | --- | --- | --- | --- |"]
    for setup, m in p.items():
        caps = " / ".join(pct(m.get(f"max_rate_limits.{c}.binding_fraction", {}).get("mean"))
                          for c in ("seats", "batch_tokens", "kv_cache"))
        lines.append(f"| {setup} | {ci(m['max_rate_rps'])} | {ci(m['max_rate_rps_per_gpu'])} | "
                     f"{ci(m['tpot_ms.p90'])} | {pct(m['slo.attainment']['mean'])} | {caps} |")
    return lines

def compare():
    name = "compare-policies"
    mr = rows(name, "max_rate.csv")
    p = by_point(rows(name, "points.csv"), "policy")
    lines = [f"Wall time {wall(name)}. Max sustainable rate from the rate grid (max_rate.csv), mean [95 % "
             "interval] over replications, paired difference to linear; the highest share of rank-steps "
             "any rate of the grid had its seats bound (points.csv).", "",
             "| policy | max rate, req/s [brackets and spread] | difference to linear, req/s | censored | seats bound (max over rates) |",
             "| --- | --- | --- | --- | --- |"]
    seats = {}
    for r in rows(name, "points.csv"):
        if r["metric"] == "limits.seats.binding_fraction":
            seats[r["policy"]] = max(seats.get(r["policy"], 0.0), float(r["mean"]))
    for r in mr:
        diff = (f"{float(r['baseline_diff']):+.3g} [{g(r['baseline_diff_ci95_low'])}, "
                f"{g(r['baseline_diff_ci95_high'])}]") if r.get("baseline_diff", "") != "" else "-"
        # The interval that keeps the grid's resolution (the brackets) where max_rate.csv has it.
        iv = ci(r, "interval_low_rps", "interval_high_rps") if "interval_low_rps" in r else ci(r)
        lines.append(f"| {r['policy']} | {iv} | {diff} | {r['censored']} | {pct(seats.get(r['policy']))} |")
    return lines

def montecarlo():
    name = "montecarlo-variability"
    p = by_point(rows(name, "points.csv"), "policy")
    lines = [f"Wall time {wall(name)}. Mean over the cluster draws (points.csv); change against linear: "
             "paired mean difference [95 % interval] and relative.", "",
             "| policy | p90 TTFT, ms | change | mean step, ms | straggler gap, us | change | seats bound |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    def change(r):
        if r.get("baseline_diff", "") == "":
            return "-"
        rel = r.get("baseline_rel_diff", "")
        return (f"{float(r['baseline_diff']):+.3g} [{float(r['baseline_diff_ci95_low']):+.3g}, "
                f"{float(r['baseline_diff_ci95_high']):+.3g}]" + (f" ({100 * float(rel):+.1f} %)" if rel else ""))
    for pol, m in p.items():
        lines.append(f"| {pol} | {g(m['ttft_ms.p90']['mean'])} | {change(m['ttft_ms.p90'])} | "
                     f"{g(m['mean_step_ms']['mean'])} | {g(m['straggler_gap_us.mean']['mean'])} | "
                     f"{change(m['straggler_gap_us.mean'])} | "
                     f"{pct(m.get('limits.seats.binding_fraction', {}).get('mean'))} |")
    return lines

def kimi():
    name = "whatif-kimi-k2-gb300"
    mr = rows(name, "max_rate.csv")
    lines = [f"Wall time {wall(name)}. Max sustainable rate from the rate grid (max_rate.csv), mean [95 % "
             "interval] over replications, paired difference to linear; then, per offered rate, each policy's "
             "mean step time and straggler gap (points.csv) and their change against linear.", "",
             "| policy | max rate, req/s [brackets and spread] | difference to linear, req/s |",
             "| --- | --- | --- |"]
    for r in mr:
        diff = (f"{float(r['baseline_diff']):+.3g} [{g(r['baseline_diff_ci95_low'])}, "
                f"{g(r['baseline_diff_ci95_high'])}]") if r.get("baseline_diff", "") != "" else "-"
        lines.append(f"| {r['policy']} | {ci(r, 'interval_low_rps', 'interval_high_rps')} | {diff} |")
    lines += ["", "| policy | rate, req/s | attainment | mean step, ms | change | straggler gap, us | change |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    cells = {}
    for r in rows(name, "points.csv"):
        cells.setdefault((r["policy"], r["workload.rate_rps"]), {})[r["metric"]] = r
    def rel(r):
        return "-" if r.get("baseline_rel_diff", "") in ("", None) else f"{100 * float(r['baseline_rel_diff']):+.1f} %"
    for (pol, rate), m in cells.items():
        lines.append(f"| {pol} | {rate} | {pct(m['slo.attainment']['mean'])} | {g(m['mean_step_ms']['mean'])} | "
                     f"{rel(m['mean_step_ms'])} | {g(m['straggler_gap_us.mean']['mean'])} | "
                     f"{rel(m['straggler_gap_us.mean'])} |")
    return lines

tables = {"whatif-ep-sizes": whatif, "compare-policies": compare, "montecarlo-variability": montecarlo,
          "whatif-kimi-k2-gb300": kimi}
present = {n for n in tables if os.path.exists(os.path.join(out, n, "points.csv"))}
text = open(doc).read().split("\n")
res, inside, seen = [], False, set()
for line in text:
    m = re.match(r"^\s*<!-- BEGIN generated: study-findings (\S+) -->$", line)
    if m:
        if m.group(1) not in tables:
            sys.exit(f"gen-study-findings: unknown block {m.group(1)}")
        indent = line[: len(line) - len(line.lstrip())]
        res.append(line)
        seen.add(m.group(1))
        if m.group(1) in present:
            res.extend((indent + l) if l else "" for l in tables[m.group(1)]())
            inside = True
        # else: no outputs for this study; its block's lines pass through as written
    elif line.strip() == "<!-- END generated -->" and inside:
        res.append(line)
        inside = False
    elif not inside:
        res.append(line)
if inside:
    sys.exit("gen-study-findings: a block without its END")
missing = set(tables) - seen
if missing:
    sys.exit(f"gen-study-findings: docs/studies.md lacks the blocks {sorted(missing)}")
open(doc + ".tmp", "w").write("\n".join(res))
os.replace(doc + ".tmp", doc)
print(f"gen-study-findings: {len(present & seen)} tables regenerated in {doc}")
PY
