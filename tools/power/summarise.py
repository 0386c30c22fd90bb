#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The power limiter's response from power_response.py's kernels.csv (plain or .gz): per dtype, the
median kernel time of the first 10 ms after idle ("cold"), of 1-3 s of continuous running, the time
from which kernels run 5 % slower than cold (the limiter's first response), and per burst length and
duty cycle the median kernel time in the bursts (the first quarter of each series left out) against
continuous. Prints a Markdown table; with power_response.py's smi.csv too, a line on the sampled SM
clock while the GPU drew near its limit. scripts/gen-power-doc.sh puts both into docs/reproductions.md.
    python3 tools/power/summarise.py data/power/h200-gemm-kernels.csv.gz [data/power/h200-gemm-smi.csv.gz]"""
import csv
import gzip
import statistics
import sys
from collections import defaultdict


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as h:
        return list(csv.DictReader(h))


def summarise(rows):
    """{dtype: {"cold", "continuous", "response_ms", "duty": {(burst_ms, duty): median}}}."""
    transient = defaultdict(list)
    duty = defaultdict(list)
    for r in rows:
        if r["experiment"] == "transient":
            transient[r["dtype"]].append((float(r["start_ms"]), float(r["dur_ms"])))
        elif r["experiment"] == "duty":
            duty[(r["dtype"], int(r["burst_ms"]), float(r["duty"]))].append(float(r["dur_ms"]))
    out = {}
    for dtype, ks in transient.items():
        cold = statistics.median([d for t, d in ks if t < 10.0])
        continuous = statistics.median([d for t, d in ks if 1000.0 <= t < 3000.0])
        # The first 5 ms bin whose median kernel runs >= 5 % slower than cold.
        response = None
        for start in range(0, 3000, 5):
            x = [d for t, d in ks if start <= t < start + 5]
            if x and statistics.median(x) >= 1.05 * cold:
                response = start
                break
        out[dtype] = {"cold": cold, "continuous": continuous, "response_ms": response, "duty": {}}
    for (dtype, burst, share), xs in duty.items():
        if dtype in out:
            out[dtype]["duty"][(burst, share)] = statistics.median(xs[len(xs) // 4:])
    return out


def smi_line(rows, near_w):
    """The samples of nvidia-smi above `near_w` W: their median SM clock against the highest sampled, and
    the share with the software power cap active."""
    clocks = [int(r[1]) for r in rows]
    near = [r for r in rows if float(r[2]) > near_w]
    if not near:
        return f"nvidia-smi: no sample above {near_w:.0f} W"
    capped = sum(1 for r in near if r[3].strip() == "Active")
    return (f"nvidia-smi, {len(near)} samples above {near_w:.0f} W: median SM clock "
            f"{statistics.median(int(r[1]) for r in near):.0f} MHz (highest sampled {max(clocks)} MHz), "
            f"software power cap active in {100 * capped / len(near):.0f} %")


def read_smi(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as h:
        return [r for r in csv.reader(h)][1:]


def table(s):
    lines = ["| dtype | cold (first 10 ms) | continuous (1-3 s) | slowdown | 5 % slower from | bursts: kernel time "
             "against continuous (burst ms / duty) |", "| --- | --- | --- | --- | --- | --- |"]
    for dtype, x in sorted(s.items()):
        bursts = ", ".join(f"{b} ms / {int(100 * d)} %: {100 * (m / x['continuous'] - 1):+.1f} %"
                           for (b, d), m in sorted(x["duty"].items()))
        lines.append(f"| {dtype} | {x['cold']:.3f} ms | {x['continuous']:.3f} ms | "
                     f"{100 * (x['continuous'] / x['cold'] - 1):+.1f} % | {x['response_ms']} ms | {bursts} |")
    return lines


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: summarise.py KERNELS_CSV [SMI_CSV]")
    lines = table(summarise(read(sys.argv[1])))
    if len(sys.argv) == 3:
        lines += ["", smi_line(read_smi(sys.argv[2]), 600.0) + "."]
    print("\n".join(lines))
