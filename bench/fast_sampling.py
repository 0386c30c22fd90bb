#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Measures issue 40's opt-in approximate routing mode, `routing.sampling = "fast"`, against the default
`exact`: its speed and its error on every headline metric of summary.json. Build the release preset first.
    python3 bench/fast_sampling.py [--build DIR] [--seeds N]
Every workload runs N seeds (default 10; seeds 1..N, the same seeds in both modes, so the arrivals and
lengths are common and only routing differs) under each mode, one child process per run. It prints one
Markdown table per workload: each metric's mean over the seeds under exact and under fast, the difference
of the means in %, and two 95 % intervals of that difference: paired by seed (the per-seed differences,
Student's t with N - 1 degrees of freedom: the two modes share each seed's arrivals and lengths, so this
is the sharp test of a bias) and Welch's (the modes as independent samples, the Welch-Satterthwaite
degrees of freedom: the seed-to-seed spread a user sees between runs). "yes" when the paired interval
holds 0: no bias shows at this many seeds. Then the CPU time per run (the child's rusage from
os.wait4, as bench/run_all.py measures it) and x real time per CPU s (simulated seconds over CPU seconds,
summed over the seeds), exact against fast.
Workloads: the two DeepSeek-V3 EP64 (64 x H200) runs of bench/run_all.py's speed section (sustainable
2.2 req/s with 1,000 requests; overloaded 60 req/s with 4,000 requests: the same TOML text, copied), and a
prefill-heavy one where the large conditional binomials dominate (prompts ~8,192 tokens, 32 output tokens,
8,192 batch tokens per rank, 8 req/s: every step is mostly prefill; its SLO is loosened to TTFT <= 8 s and
TPOT <= 1 s so that attainment is neither 0 nor 100 %). Nothing is cut: the whole default run is about 2 CPU minutes on a 2-core machine.
"""

import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile

from bench_child import EP64, run_child

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--build", default="build/release", help="build directory holding epsim (default build/release)")
ap.add_argument("--seeds", type=int, default=10, help="seeds per workload and mode (default 10)")
args = ap.parse_args()
if args.seeds < 2:
    sys.exit("fast_sampling.py: --seeds must be at least 2 (the noise needs a spread)")
epsim = os.path.join(args.build, "epsim")
if not os.path.exists(epsim):
    sys.exit(f"fast_sampling.py: {epsim} not found; build the release preset first")

# Prefill-heavy: long prompts in large batches, so most conditional binomials (tokens x top-8 picks of a
# rank over 256 experts) have variance >= 25 and are drawn from the normal.
prefill = ('[run]\nseed = 1\nmax_sim_time_s = 3600.0\n'
           '[workload.prompt_tokens]\ndistribution = "lognormal"\nmean = 8192\ncv = 0.3\nmin = 1024\nmax = 32768\n'
           '[workload.output_tokens]\ndistribution = "lognormal"\nmean = 32\ncv = 0.5\nmin = 4\nmax = 256\n'
           '[scheduler]\nmax_batch_tokens = 8192\nmax_running_requests = 128\nstep_overhead_us = 200.0\n'
           '[slo]\nttft_ms = 8000.0\ntpot_ms = 1000.0\n'
           '[model]\npreset = "deepseek-v3"\n[cluster]\npreset = "hgx-h200"\nnodes = 8\n'
           '[workload]\nrate_rps = 8\nnum_requests = 1000\n')
workloads = [
    ("DeepSeek-V3 EP64 (64 x H200), sustainable 2.2 req/s, 1,000 requests", EP64.format(rate=2.2, n=1000)),
    ("DeepSeek-V3 EP64, overloaded 60 req/s, 4,000 requests", EP64.format(rate=60, n=4000)),
    ("DeepSeek-V3 EP64, prefill-heavy: prompts ~8,192 tokens, 32 output tokens, 8,192 batch tokens, "
     "8 req/s, 1,000 requests (SLO: TTFT <= 8 s, TPOT <= 1 s)", prefill),
]

# (label, path in summary.json's "metrics")
metrics = [(f"{m} {s} (ms)", (f"{m.lower()}_ms", s)) for m in ("TTFT", "TPOT", "E2E")
           for s in ("mean", "p50", "p90", "p99")]
metrics += [
    ("SLO attainment", ("slo", "attainment")),
    ("goodput (req/s)", ("slo", "goodput_rps")),
    ("straggler gap mean (us)", ("straggler_gap_us", "mean")),
    ("straggler gap max (us)", ("straggler_gap_us", "max")),
    ("barrier idle share", ("barrier_idle_fraction",)),
    ("mean step (ms)", ("mean_step_ms",)),
    ("steps", ("steps",)),
]

# Student's t 0.975 quantiles by degrees of freedom (1..30), then the normal's.
t975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
        2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048,
        2.045, 2.042]


def t_quantile(df):
    if df >= 30:
        return 2.042 if df < 40 else 1.96 + (2.042 - 1.96) * 30.0 / df
    lo = max(1, int(math.floor(df)))
    hi = min(30, lo + 1)
    w = df - lo
    return t975[lo - 1] * (1 - w) + t975[hi - 1] * w


def run(cmd, timeout=3600):
    """Runs cmd; returns (its output, its CPU seconds from wait4's rusage of the child)."""
    text, _, _, cpu = run_child(cmd, "fast_sampling.py", timeout)
    return text, cpu


def one_run(toml_text, mode, seed):
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "c.toml")
        with open(cfg, "w") as f:
            f.write(toml_text)
        out_dir = os.path.join(d, "out")
        text, cpu = run([epsim, "run", cfg, "--seed", str(seed), "--set", f'routing.sampling="{mode}"',
                         "--out", out_dir])
        with open(os.path.join(out_dir, "summary.json")) as f:
            summary = json.load(f)
    m = re.search(r"in ([\d.]+) s simulated", text)
    values = {}
    for label, path in metrics:
        v = summary["metrics"]
        for key in path:
            v = v[key]
        values[label] = float(v)
    return {"values": values, "sim_s": float(m.group(1)), "cpu": cpu}


def fmt(v):
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1000:
        return f"{v:,.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.4f}"


print(f"epsim: {epsim}; {args.seeds} seeds per workload and mode (seeds 1..{args.seeds})")
worst = (0.0, "", "")
for title, text in workloads:
    runs = {"exact": [], "fast": []}
    for seed in range(1, args.seeds + 1):
        for mode in ("exact", "fast"):  # alternating, so both modes see the same machine state
            runs[mode].append(one_run(text, mode, seed))
    print(f"\n### {title}\n")
    print("| metric | exact (mean) | fast (mean) | fast - exact | 95 % interval, paired | 95 % interval, Welch "
          "| no bias shown (paired) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    n = args.seeds
    for label, _ in metrics:
        xs = [r["values"][label] for r in runs["exact"]]
        ys = [r["values"][label] for r in runs["fast"]]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        vx, vy = statistics.variance(xs) / n, statistics.variance(ys) / n
        diff = my - mx
        se = math.sqrt(vx + vy)
        if se > 0:
            df = (vx + vy) ** 2 / ((vx * vx + vy * vy) / (n - 1))
            half = t_quantile(df) * se
        else:
            half = 0.0
        ds = [y - x for x, y in zip(xs, ys)]  # the same seed under both modes
        paired_half = t_quantile(n - 1) * math.sqrt(statistics.variance(ds) / n)
        within = abs(diff) <= paired_half
        pct = (lambda v: 100.0 * v / mx) if mx != 0 else (lambda v: float("nan"))
        print(f"| {label} | {fmt(mx)} | {fmt(my)} | {pct(diff):+.2f} % | {pct(diff - paired_half):+.2f} % .. "
              f"{pct(diff + paired_half):+.2f} % | {pct(diff - half):+.2f} % .. {pct(diff + half):+.2f} % | "
              f"{'yes' if within else '**no**'} |")
        if mx != 0 and abs(pct(diff)) > abs(worst[0]):
            worst = (pct(diff), label, title)
    cpu = {k: statistics.fmean(r["cpu"] for r in v) for k, v in runs.items()}
    x = {k: sum(r["sim_s"] for r in v) / sum(r["cpu"] for r in v) for k, v in runs.items()}
    print(f"\nCPU per run: exact {cpu['exact']:.2f} s, fast {cpu['fast']:.2f} s "
          f"({cpu['exact'] / cpu['fast']:.2f}x less); x real time per CPU s: exact {x['exact']:,.0f}x, "
          f"fast {x['fast']:,.0f}x")
    sys.stdout.flush()
print(f"\nLargest headline difference of the means: {worst[0]:+.2f} % ({worst[1]}; {worst[2]})")
