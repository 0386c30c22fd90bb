#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fits epsim's power-limiter model (hardware/dvfs.hpp) to power_response.py's kernels.csv and judges it
on data the fit did not see. The model, kernel by kernel: a power duty u rises toward 1 with time constant
`rise` while a kernel runs and falls toward 0 with `fall` while the GPU idles; a kernel runs at the cold
clock while u <= h and at (h / u)^(1 / alpha) of it above, with h = (cold / continuous)^alpha and alpha =
2.8 (GEM's Table 2, not fitted here). Fitted: `rise` on the transient after idle (both dtypes, the 10 ms
medians of its first 400 ms), `fall` on FP8's bursts. Out of sample: BF16's bursts (the same GPU and
harness, another dtype) and, given a lockstep kernels.csv (power_response.py --experiments lockstep), the
high-duty regime of expert-parallel serving: 20 ms bursts at 80-99 % duty against the same harness's
continuous bursts, measured and by the model (as fitted, and with fall = rise). Prints Markdown tables and
the fitted values; scripts/gen-power-doc.sh puts them into docs/reproductions.md.
    python3 tools/power/dvfs_fit.py data/power/h200-gemm-kernels.csv.gz [data/power/h200-lockstep-kernels.csv.gz]"""
import math
import statistics
import sys
from collections import defaultdict

import summarise

ALPHA = 2.8


def clock(u, h):
    return 1.0 if u <= h else (h / u) ** (1.0 / ALPHA)


def transient(cold, c1, rise, until_ms):
    """(start, duration) of back-to-back kernels from idle (u = 0) under the model."""
    h = c1 ** ALPHA
    out, u, t = [], 0.0, 0.0
    while t < until_ms:
        d = cold / clock(u, h)
        out.append((t, d))
        a = math.exp(-d / rise)
        u, t = u * a + (1.0 - a), t + d
    return out


def bins(series, until_ms, width=10):
    by = defaultdict(list)
    for t, d in series:
        if t < until_ms:
            by[int(t // width)].append(d)
    return {k: statistics.median(v) for k, v in by.items()}


def burst_time(cold, c1, rise, fall, burst_ms, duty, cycles=120, skip=40, centre=statistics.median):
    """Median (or `centre`) kernel time in periodic bursts (burst_ms on, at `duty`) once the cycle has settled."""
    h = c1 ** ALPHA
    period, u, ks = burst_ms / duty, 0.0, []
    for cycle in range(cycles):
        t = 0.0
        while t < burst_ms:
            d = cold / clock(u, h)
            a = math.exp(-d / rise)
            u, t = u * a + (1.0 - a), t + d
            if cycle >= skip:
                ks.append(d)
        u *= math.exp(-(period - t) / fall)
    return centre(ks)


def fit(rows, s):
    measured = {dt: bins([(float(r["start_ms"]), float(r["dur_ms"])) for r in rows
                          if r["experiment"] == "transient" and r["dtype"] == dt], 400.0) for dt in s}

    def rise_error(rise):
        e = 0.0
        for dt, x in s.items():
            model = bins(transient(x["cold"], x["cold"] / x["continuous"], rise, 400.0), 400.0)
            e += sum((measured[dt][k] / x["cold"] - model[k] / x["cold"]) ** 2 for k in measured[dt] if k in model)
        return e

    rise = min((r / 2.0 for r in range(10, 201)), key=rise_error)  # 5-100 ms in 0.5 ms steps
    fp8 = s["fp8"]

    def fall_error(fall):
        return sum((burst_time(fp8["cold"], fp8["cold"] / fp8["continuous"], rise, fall, b, d) - m) ** 2
                   for (b, d), m in fp8["duty"].items())

    fall = min(range(20, 1001, 10), key=fall_error)  # 20 ms - 1 s in 10 ms steps
    return rise, float(fall)


def table(s, rise, fall):
    lines = ["| dtype | bursts: measured / model, kernel time against continuous (burst ms / duty) | rms error |"
             " sample |", "| --- | --- | --- | --- |"]
    for dt, x in sorted(s.items()):
        c1 = x["cold"] / x["continuous"]
        cells, sq = [], []
        for (b, d), m in sorted(x["duty"].items()):
            p = burst_time(x["cold"], c1, rise, fall, b, d)
            mm, pp = 100 * (m / x["continuous"] - 1), 100 * (p / x["continuous"] - 1)
            cells.append(f"{b} ms / {int(100 * d)} %: {mm:+.1f} / {pp:+.1f} %")
            sq.append((mm - pp) ** 2)
        sample = "in sample (fits fall)" if dt == "fp8" else "out of sample"
        lines.append(f"| {dt} | {', '.join(cells)} | {math.sqrt(sum(sq) / len(sq)):.1f} points | {sample} |")
    c1s = [x["cold"] / x["continuous"] for x in s.values()]
    lines += ["", f"Fitted: rise {rise:.1f} ms (transient, both dtypes), fall {fall:.0f} ms (FP8 bursts); "
              f"clock under continuous load {min(c1s):.3f}-{max(c1s):.3f} of cold (measured); alpha {ALPHA} "
              f"(GEM's Table 2)."]
    return lines


def lockstep(rows, s, rise, fall):
    """Per dtype and nominal duty: the duty the kernels' own times give (busy over span after the first
    1.5 s), the mean kernel time against the same dtype's continuous (nominal 100 %) series, and the model's
    at the same duty and 20 ms bursts, with the fitted fall and with fall = rise."""
    series = defaultdict(list)
    for r in rows:
        if r["experiment"] == "lockstep":
            series[(r["dtype"], r["duty"])].append((float(r["start_ms"]), float(r["dur_ms"])))
    settled = {}
    for key, ks in series.items():
        ks = [k for k in ks if k[0] >= 1500.0]
        span = ks[-1][0] + ks[-1][1] - ks[0][0]
        settled[key] = (sum(d for _, d in ks) / span, statistics.mean(d for _, d in ks))
    out = []
    for (dt, nominal), (duty, mean) in sorted(settled.items(), key=lambda kv: (kv[0][0], -float(kv[0][1]))):
        ref_duty, ref_mean = settled[(dt, "1.0")]
        if nominal == "1.0" or dt not in s:
            continue
        x = s[dt]
        c1 = x["cold"] / x["continuous"]

        def model(f):
            at = burst_time(x["cold"], c1, rise, f, 20.0, duty, 200, 100, statistics.mean)
            ref = burst_time(x["cold"], c1, rise, f, 20.0, ref_duty, 200, 100, statistics.mean)
            return 100 * (at / ref - 1)

        out.append((dt, float(nominal), duty, ref_duty, 100 * (mean / ref_mean - 1), model(fall), model(rise)))
    return out


def lockstep_table(out, fall):
    lines = ["| dtype | duty (its kernels' busy share) | measured: kernel time against the ~100 % series | "
             f"model, fall {fall:.0f} ms | model, fall = rise |", "| --- | --- | --- | --- | --- |"]
    for dt, nominal, duty, ref, m, p, q in out:
        lines.append(f"| {dt} | {100 * duty:.1f} % against {100 * ref:.1f} % | {m:+.1f} % | {p:+.1f} % | {q:+.1f} % |")
    return lines


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: dvfs_fit.py KERNELS_CSV [LOCKSTEP_KERNELS_CSV]")
    rows = summarise.read(sys.argv[1])
    s = summarise.summarise(rows)
    rise, fall = fit(rows, s)
    lines = table(s, rise, fall)
    if len(sys.argv) == 3:
        lines += ["", "Out of sample, the high-duty regime of expert-parallel steps (20 ms bursts with short gaps, "
                  "mean kernel time over the last 2.5 of 4 s):", ""]
        lines += lockstep_table(lockstep(summarise.read(sys.argv[2]), s, rise, fall), fall)
    print("\n".join(lines))
