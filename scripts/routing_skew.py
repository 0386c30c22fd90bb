#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Draws the synthetic router's decode steps for experiments/reproductions/routing-skew.toml over a grid of
Zipf exponents and seeds and measures them as TensorRT-LLM's expert statistics do (per-layer,
per-iteration max / mean and std / mean, per expert and per rank of contiguous experts), into
OUT/points.csv (one row per exponent and seed: the averages over layers). docs/reproductions.md's
routing-skew table is made from it (scripts/gen_reproductions.py).
    python3 scripts/routing_skew.py EPSIM OUT"""
import atomic_csv
import json
import os
import subprocess
import sys
import tempfile

ZIPF = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]  # 0.4: the router's default
SEEDS = [1, 2, 3, 4, 5]
TOKENS = 4096  # a decode iteration of the blog: 1,024 pairs per rank x 32 ranks / top-8
STEPS = 100    # the blog's iterations 100-200
EP = 32
COLUMNS = ["zipf_exponent", "seed", "expert_imbalance", "expert_cv", "rank_imbalance", "rank_cv", "gini"]


def measure(epsim, config, zipf, seed, work):
    trace = os.path.join(work, "t.trace")
    stats = os.path.join(work, "s.json")
    subprocess.run([epsim, "trace", "gen", config, "--out", trace, "--steps", str(STEPS), "--tokens", str(TOKENS),
                    "--set", f"routing.zipf_exponent={zipf}", "--set", f"run.seed={seed}"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([epsim, "trace", "stats", trace, "--ep", str(EP), "--json", stats], check=True,
                   stdout=subprocess.DEVNULL)
    with open(stats) as h:
        layers = json.load(h)["layers"]

    def mean(key):
        return sum(layer[key] for layer in layers) / len(layers)

    return {"zipf_exponent": zipf, "seed": seed, "expert_imbalance": mean("step_max_over_mean") - 1.0,
            "expert_cv": mean("step_cv"), "rank_imbalance": mean("gpu_step_max_over_mean") - 1.0,
            "rank_cv": mean("gpu_step_cv"), "gini": mean("gini")}


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: routing_skew.py EPSIM OUT")
    epsim, out = argv[1], argv[2]
    config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "experiments", "reproductions",
                          "routing-skew.toml")
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        rows = [measure(epsim, config, z, s, work) for z in ZIPF for s in SEEDS]
    atomic_csv.write_rows(os.path.join(out, "points.csv"), COLUMNS, rows)


if __name__ == "__main__":
    main(sys.argv)
