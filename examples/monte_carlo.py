#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Monte Carlo over GPU variability, from Python (notebook-style cells: `# %%`).

The study examples/studies/montecarlo-variability.toml (30 clusters drawn from GEM's measured L40 speed
spread, each serving the same workload under four placements) run through the Python API, its
distribution over the draws tabulated and plotted. With matplotlib installed it writes
OUT/monte_carlo.png (Agg backend: no display needed).

    python3 examples/monte_carlo.py [--study FILE] [--out DIR] [--jobs N]

The tests run it on tests/data/python/montecarlo-tiny.toml (2 placements x 2 draws).
"""
# %% Setup: arguments (a notebook sets `args` by hand instead)
import argparse
import os
import sys
from pathlib import Path

import numpy as np

import epsim

here = Path(__file__).resolve().parent
parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("--study", default=str(here / "studies" / "montecarlo-variability.toml"))
parser.add_argument("--out", default="results/monte-carlo-py", help="folder for the study and the figure")
parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
args = parser.parse_args([] if "ipykernel" in sys.modules else None)
out = Path(args.out)

# %% Run the study: every cluster draw x placement, on `jobs` threads (the GIL is released meanwhile).
# The outputs stay in OUT/study, so running this cell again resumes from the journal.
study = epsim.sweep(args.study, jobs=args.jobs, out=out / "study")
print(study.text)

# %% The draws: one row per run (placement, replication = cluster draw) and its metrics.
metrics = ["ttft_ms.p90", "mean_step_ms", "straggler_gap_us.mean", "barrier_idle_fraction"]
runs = study.runs
policies = list(dict.fromkeys(str(p) for p in runs["policy"]))  # in the study's order
draws = {p: {m: np.asarray(runs[m])[np.asarray(runs["policy"]) == p] for m in metrics} for p in policies}
print(f"{len(runs)} runs: {len(policies)} placements x {len(runs) // len(policies)} cluster draws")
print(f"{'placement':<10}" + "".join(f"{m + ' (mean +- sd)':>25}" for m in metrics))
for p in policies:
    cells = "".join(f"{np.mean(v):>12.4g} +- {np.std(v, ddof=1) if len(v) > 1 else 0.0:<9.3g}"
                    for v in draws[p].values())
    print(f"{p:<10}{cells}")

# %% What each placement recovers against the baseline (points.csv: paired differences over the same
# draws, mean and 95 % interval), for p90 TTFT and the straggler gap.
points = study.points
rows = [i for i in range(len(points)) if str(points["metric"][i]) in ("ttft_ms.p90", "straggler_gap_us.mean")
        and str(points["policy"][i]) != policies[0]]
for i in rows:
    print(f"{str(points['policy'][i]):<8} {str(points['metric'][i]):<22} vs {policies[0]}: "
          f"{float(points['baseline_diff'][i]):+.4g} [{float(points['baseline_diff_ci95_low'][i]):+.4g}, "
          f"{float(points['baseline_diff_ci95_high'][i]):+.4g}] ({100 * float(points['baseline_rel_diff'][i]):+.1f} %)")

# %% Plot: the distribution of each metric over the cluster draws, one box per placement.
try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    plt = None
    print("matplotlib is not installed: no figure (Debian: apt install python3-matplotlib)")
if plt is not None:
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, (m, label) in zip(axes, [("ttft_ms.p90", "p90 TTFT (ms)"), ("mean_step_ms", "mean step (ms)"),
                                     ("straggler_gap_us.mean", "straggler gap per MoE layer (us)")]):
        ax.boxplot([draws[p][m] for p in policies], labels=policies)
        for k, p in enumerate(policies):  # every draw, jittered sideways
            x = np.full(len(draws[p][m]), k + 1.0) + np.linspace(-0.12, 0.12, len(draws[p][m]))
            ax.plot(x, draws[p][m], ".", alpha=0.5)
        ax.set_title(label)
    fig.suptitle(f"{Path(study.study['study']).name}: {len(runs) // len(policies)} cluster draws per placement")
    fig.tight_layout()
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "monte_carlo.png", dpi=110)
    print(f"figure: {out / 'monte_carlo.png'}")
