#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs experiments/reproductions/vibe-breakdown.toml (DeepSeek-V3 FP8 prefill on 8 x MI325X, ViBE's
Figure 3 setup) with TP8 attention, as shipped, and with DP attention (attention_tp = 1), and splits each
run's MoE layers on GPU 0 into local work (attention, projections, their all-reduce, router, norms),
expert FFN and all-to-all (dispatch + combine), from layers.csv, into OUT/points.csv. docs/reproductions.md's
ViBE breakdown table is made from it (scripts/gen_reproductions.py).
    python3 scripts/vibe_breakdown.py EPSIM OUT"""
import atomic_csv
import csv
import os
import subprocess
import sys
import tempfile

ATTENTION_TP = [8, 1]
COLUMNS = ["attention_tp", "moe_layers", "local_share", "expert_share", "a2a_share", "local_ms", "expert_ms", "a2a_ms"]


def split(layers_csv):
    with open(layers_csv, newline="") as h:
        rows = [r for r in csv.DictReader(h) if r["gpu"] == "0"]
    local = sum(float(r["local_ns"]) for r in rows)
    expert = sum(float(r["expert_ns"]) for r in rows)
    a2a = sum(float(r["dispatch_ns"]) + float(r["combine_ns"]) for r in rows)
    total = local + expert + a2a
    n = len(rows)
    return {"moe_layers": n, "local_share": local / total, "expert_share": expert / total, "a2a_share": a2a / total,
            "local_ms": local / n / 1e6, "expert_ms": expert / n / 1e6, "a2a_ms": a2a / n / 1e6}


def main(argv):
    if len(argv) != 3:
        sys.exit("usage: vibe_breakdown.py EPSIM OUT")
    epsim, out = argv[1], argv[2]
    config = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "experiments", "reproductions",
                          "vibe-breakdown.toml")
    os.makedirs(out, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for tp in ATTENTION_TP:
            run = os.path.join(work, f"tp{tp}")
            subprocess.run([epsim, "run", config, "--out", run, "--set", f"parallel.attention_tp={tp}"], check=True,
                           stdout=subprocess.DEVNULL)
            rows.append({"attention_tp": tp, **split(os.path.join(run, "layers.csv"))})
    atomic_csv.write_rows(os.path.join(out, "points.csv"), COLUMNS, rows)


if __name__ == "__main__":
    main(sys.argv)
