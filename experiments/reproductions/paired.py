#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Paired comparisons in a study's runs.csv (`epsim sweep`): the treatment level of an axis against the
baseline level, replication by replication (the same replication index has the same seeds under common
random numbers), within each combination of the study's other axes. Prints the mean paired difference,
its 95 % Student-t interval and the same relative to the baseline's mean.
    paired.py RUNS.csv AXIS BASELINE TREATMENT METRIC [--expect lower|higher]
With --expect, exits 1 unless every paired difference points that way and the interval excludes 0 (the
test suite's direction checks, docs/reproductions.md).
    paired.py --gap DIR    slowest-fastest GPU gap per cluster size of a study saved with save_runs
"""

import csv
import glob
import json
import math
import statistics
import sys

# Two-sided 95 % Student-t quantiles by degrees of freedom (from the printed table; no scipy needed).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
       11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 19: 2.093, 29: 2.045, 60: 2.000, 120: 1.980}


def t95(df):
    return T95.get(df) or T95[max(k for k in T95 if k <= df)]


def interval(values):
    mean = statistics.fmean(values)
    half = t95(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean, half


def paired(path, axis, base, treat, metric, expect):
    rows = list(csv.DictReader(open(path)))
    if not rows or axis not in rows[0] or metric not in rows[0]:
        sys.exit(f"{path}: expected columns '{axis}' and '{metric}'")
    names = list(rows[0])  # the axes are the columns between 'replication' and 'seed'
    others = [c for c in names[names.index("replication") + 1:names.index("seed")] if c != axis]
    pairs = {}
    for r in rows:
        key = tuple(r[c] for c in others)
        pairs.setdefault(key, {}).setdefault(r["replication"], {})[r[axis]] = float(r[metric])
    failed = False
    for key, reps in sorted(pairs.items()):
        both = [v for v in reps.values() if base in v and treat in v]
        if len(both) < 2:
            sys.exit(f"{path}: fewer than 2 paired replications of {treat} vs {base} at {key}")
        diffs = [v[treat] - v[base] for v in both]
        mean, half = interval(diffs)
        base_mean = statistics.fmean(v[base] for v in both)
        rel = f" ({100 * mean / base_mean:+.2f} % [{100 * (mean - half) / base_mean:+.2f}, " \
              f"{100 * (mean + half) / base_mean:+.2f}])" if base_mean else ""
        where = ", ".join(f"{c}={v}" for c, v in zip(others, key)) or "all"
        line = f"{treat} vs {base} ({where}): {metric} {mean:+.4g} [{mean - half:+.4g}, {mean + half:+.4g}]{rel}"
        if expect:
            good = [d < 0 if expect == "lower" else d > 0 for d in diffs]
            ok = all(good) and (mean + half < 0 if expect == "lower" else mean - half > 0)
            line = f"{'ok  ' if ok else 'FAIL'} {line}, {sum(good)} of {len(diffs)} replications {expect}"
            failed |= not ok
        print(line)
    return 1 if failed else 0


def speed_draws(out):
    """{GPUs: [each saved run's drawn speed factors]} of a study saved with save_runs, in file order."""
    by_gpus = {}
    for f in sorted(glob.glob(out + "/runs/*/summary.json")):
        with open(f) as h:
            resolved = json.load(h)["resolved"]
        by_gpus.setdefault(resolved["gpus"], []).append(resolved["speed_factors"])
    return by_gpus


def gap(out):
    for n, draws in sorted(speed_draws(out).items()):
        a, ha = interval([max(x) / min(x) - 1 for x in draws])
        b, hb = interval([1 - min(x) / max(x) for x in draws])
        print(f"N={n:4d} draws={len(draws)}: fastest/slowest - 1 = {100 * a:.2f} % +-{100 * ha:.2f}, "
              f"1 - slowest/fastest = {100 * b:.2f} % +-{100 * hb:.2f}")
    return 0


def main():
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "--gap":
        return gap(args[1])
    expect = None
    if len(args) == 7 and args[5] == "--expect" and args[6] in ("lower", "higher"):
        expect = args[6]
        args = args[:5]
    if len(args) != 5:
        sys.exit(__doc__)
    return paired(*args, expect)


if __name__ == "__main__":
    sys.exit(main())
