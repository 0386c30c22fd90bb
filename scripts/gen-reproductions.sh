#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Regenerates docs/reproductions.md's generated blocks from the reproduction studies' outputs, so that
# their figures and verdicts cannot go stale (issue 41). Each block is
#   <!-- BEGIN generated: reproduction NAME -->
#   ...the table and verdict formatted from DIR/NAME/points.csv...
#   <!-- END generated -->
# and the prose outside the blocks is kept as written (re-read it against the new tables). Verdicts use
# fixed words: reproduces (the direction, and the size within 30 % of the paper's, at every comparable
# setting), direction only, does not, not comparable.
#   scripts/gen-reproductions.sh DIR            blocks from DIR/NAME (epsim sweep outputs)
#   scripts/gen-reproductions.sh --run DIR [EPSIM]   first runs the studies into DIR (-j 2)
#   scripts/gen-reproductions.sh --check DIR    exit 1, printing the difference, where the doc's blocks are
#                                               not what DIR's outputs give (writes nothing)
# Studies: director-load (experiments/reproductions/director-load.toml).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
mode=write
case "${1:-}" in
  --run) mode=run; shift ;;
  --check) mode=check; shift ;;
esac
[ $# -ge 1 ] || { echo "usage: gen-reproductions.sh [--run|--check] DIR [EPSIM]" >&2; exit 2; }
dir=$1
epsim=${2:-$root/build/release/epsim}
studies=(director-load)

if [ $mode = run ]; then
  [ -x "$epsim" ] || { echo "gen-reproductions: no epsim binary at $epsim" >&2; exit 2; }
  mkdir -p "$dir"
  for s in "${studies[@]}"; do
    "$epsim" sweep "$root/experiments/reproductions/$s.toml" --out "$dir/$s" -j 2 --progress none >/dev/null
  done
fi
for s in "${studies[@]}"; do
  [ -f "$dir/$s/points.csv" ] || { echo "gen-reproductions: no $dir/$s/points.csv (run the study, or --run)" >&2; exit 2; }
done

python3 - "$root/docs/reproductions.md" "$dir" "$mode" <<'PY'
import csv, difflib, os, re, sys

doc, out, mode = sys.argv[1], sys.argv[2], sys.argv[3]

def points(name):
    with open(os.path.join(out, name, "points.csv"), newline="") as h:
        return list(csv.DictReader(h))

def rel(r, base):
    """A paired difference as a change in % of the baseline's mean, with its 95 % interval likewise."""
    b = float(base["mean"])
    d, lo, hi = (100 * float(r[k]) / b for k in ("baseline_diff", "baseline_diff_ci95_low", "baseline_diff_ci95_high"))
    return d, lo, hi

def fmt(t):
    return f"{t[0]:+.1f} % [{t[1]:+.1f}, {t[2]:+.1f}]"

def verdict(paper_pct, gains):
    """gains: (mean, low, high) changes in %; paper_pct: the paper's change in %, same sign convention."""
    same = all((g[2] < 0) if paper_pct < 0 else (g[1] > 0) for g in gains)
    if same and all(abs(g[0] - paper_pct) <= 0.3 * abs(paper_pct) for g in gains):
        return "reproduces"
    return "direction only" if same else "does not"

def director_load():
    name = "director-load"
    cells = {}
    for r in points(name):
        cells.setdefault(r["interval"], {}).setdefault(r["policy"], {})[r["metric"]] = r
    # Queueing shows in offline's TTFT: a batch that waits for the one before it starts late. Stable: within
    # 10 % of the TTFT at the lightest load (the study's last, longest interval), where no batch waits.
    lightest = float(list(cells.values())[-1]["offline"]["ttft_ms.mean"]["mean"])
    lines = ["| batch interval / offline's service time | offline's mean TTFT, ms | DIRECTOR vs offline: E2E | "
             "mean step | reactive vs offline: E2E | mean step |",
             "| --- | --- | --- | --- | --- | --- |"]
    stable = []
    for interval, pol in cells.items():
        off = pol["offline"]
        ttft = float(off["ttft_ms.mean"]["mean"])
        d = {p: {m: rel(pol[p][m], off[m]) for m in ("e2e_ms.mean", "mean_step_ms")} for p in ("director", "reactive")}
        lines.append(f"| {interval} | {ttft:.1f} | {fmt(d['director']['e2e_ms.mean'])} | "
                     f"{fmt(d['director']['mean_step_ms'])} | {fmt(d['reactive']['e2e_ms.mean'])} | "
                     f"{fmt(d['reactive']['mean_step_ms'])} |")
        if ttft <= 1.1 * lightest:
            stable.append((interval, d["director"]["e2e_ms.mean"]))
    lo = min(g[0] for _, g in stable)
    hi = max(g[0] for _, g in stable)
    v = verdict(-11.0, [g for _, g in stable])
    lines += ["", f"Verdict at 4 GPUs, stable loads (offline's mean TTFT within 10 % of its {lightest:.1f} ms at the "
              f"lightest load: intervals {', '.join(i for i, _ in stable)}): DIRECTOR vs offline E2E {lo:+.1f} to "
              f"{hi:+.1f} % against the paper's -11 %: **{v}**."]
    return lines

tables = {"director-load": director_load}
text = open(doc).read().split("\n")
res, inside, seen = [], False, set()
for line in text:
    m = re.match(r"^<!-- BEGIN generated: reproduction (\S+) -->$", line)
    if m:
        if m.group(1) not in tables:
            sys.exit(f"gen-reproductions: unknown block {m.group(1)}")
        res.append(line)
        seen.add(m.group(1))
        res.extend(tables[m.group(1)]())
        inside = True
    elif line == "<!-- END generated -->" and inside:
        res.append(line)
        inside = False
    elif not inside:
        res.append(line)
if inside:
    sys.exit("gen-reproductions: a block without its END")
missing = set(tables) - seen
if missing:
    sys.exit(f"gen-reproductions: docs/reproductions.md lacks the blocks {sorted(missing)}")
if mode == "check":
    diff = list(difflib.unified_diff(text, res, "docs/reproductions.md", "from " + out, lineterm=""))
    if diff:
        print("\n".join(diff))
        sys.exit("gen-reproductions: docs/reproductions.md differs from the outputs (scripts/gen-reproductions.sh DIR)")
    print(f"gen-reproductions: docs/reproductions.md matches {out}")
else:
    open(doc + ".tmp", "w").write("\n".join(res))
    os.replace(doc + ".tmp", doc)
    print(f"gen-reproductions: {len(seen)} blocks regenerated in {doc}")
PY
