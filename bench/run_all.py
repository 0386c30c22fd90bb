#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs every benchmark of bench/ (and the scale runs of issue 19) and prints one Markdown table: what was
measured, the target beside it, and whether it is met. Each measurement runs in a child process (peak
memory from its own rusage). Build the release preset first.
    python3 bench/run_all.py [BUILD_DIR]          (default build/release)
"""

import os
import re
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build/release"
bench = os.path.join(build, "bench")
epsim = os.path.join(build, "epsim")
rows = []  # (benchmark, measured, target, status)


def run(cmd, timeout=1800):
    """Runs cmd; returns (its output, wall seconds, its own peak RSS in MiB, from wait4)."""
    with tempfile.TemporaryFile("w+") as out:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, text=True)
        deadline = t0 + timeout
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            if time.monotonic() > deadline:
                p.kill()
                sys.exit(f"run_all.py: {' '.join(cmd)} ran past {timeout} s")
            time.sleep(0.02)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if p.returncode != 0:
        sys.exit(f"run_all.py: {' '.join(cmd)} failed:\n{text}")
    return text, wall, usage.ru_maxrss / 1024.0


def row(name, measured, target="", met=None):
    rows.append((name, measured, target, "" if met is None else ("met" if met else "not met")))


def epsim_run(toml_text, sets=()):
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "c.toml")
        with open(cfg, "w") as f:
            f.write(toml_text)
        cmd = [epsim, "run", cfg, "--out", os.path.join(d, "out")]
        for s in sets:
            cmd += ["--set", s]
        out, wall, peak = run(cmd)
    m = re.search(r"requests: (\d+) finished of (\d+) in ([\d.]+) s simulated \((\d+) steps", out)
    x = re.search(r"\(([\d.]+)x real time\)", out)
    return {"finished": int(m.group(1)), "sim_s": float(m.group(3)), "steps": int(m.group(4)),
            "x": float(x.group(1)) if x else 0.0, "wall": wall, "peak": peak}


# Step loop (bench/step_loop_bench): whole simulations.
out, _, _ = run([os.path.join(bench, "step_loop_bench")])
for line in out.splitlines():
    m = re.match(r"(.+?)\s+(\d+) steps in\s+([\d.]+) s wall:\s+(\d+) steps/s,\s+([\d.]+) x real time.*SLO (\d+) %", line)
    if not m:
        continue
    label, steps_s, x, slo = m.group(1).strip(), int(m.group(4)), float(m.group(5)), int(m.group(6))
    target, met = "", None
    if label.startswith("DeepSeek-V3, 64 x H200, EP64, sustainable"):
        target, met = ">= 1,000x at SLO >= 90 %", x >= 1000 and slo >= 90
    elif label.startswith("DeepSeek-V3, 64 x H200"):
        target, met = ">= 2,000x (overloaded workload)", x >= 2000
    row(f"step loop: {label}", f"{steps_s:,} steps/s, {x:.0f}x real time (SLO {slo} %)", target, met)

# Scale: EP1024 throughput (projected to 10^6 requests) and EP4096 memory with the port model.
base = ('[run]\nmax_sim_time_s = 1e6\n[model]\npreset = "deepseek-v3"\n[cluster]\npreset = "hgx-h200"\nnodes = {nodes}\ncollective_model = "ports"\n'
        '[workload]\nnum_requests = {n}\nrate_rps = {rate}\n[policy]\nplacement = "replicated"\n'
        '[parallel]\nredundant_experts = {red}\n')
n_ep1024 = int(os.environ.get("EPSIM_BENCH_EP1024_REQUESTS", "1000000"))
r = epsim_run(base.format(nodes=128, n=n_ep1024, rate=400, red=768))
row(f"EP1024 DeepSeek-V3, {n_ep1024:,} requests at 400 req/s (replicated placement, ports)",
    f"{r['finished']:,} finished in {r['wall'] / 60:.1f} min wall ({r['steps']:,} steps, {r['x']:.0f}x real time), "
    f"peak {r['peak']:.0f} MiB", "10^6 requests < 10 min",
    r["finished"] == n_ep1024 and n_ep1024 >= 1000000 and r["wall"] < 600)
r = epsim_run(base.format(nodes=512, n=20, rate=4, red=3840))
row("EP4096 DeepSeek-V3 with the port model, peak memory", f"{r['peak']:.0f} MiB", "<= 200 MiB", r["peak"] <= 200)

# Memory and time against GPUs (issue 35): the demo (EP8 groups on the graph model) on 1k to 8k GPUs,
# 20 requests each; memory grows linearly with GPUs (it grew with GPUs squared: 84 / 246 / 846 / 3,151 MB).
demo_text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "demo.toml")).read()
scale = {}
for nodes in (128, 256, 512, 1024):
    scale[nodes] = epsim_run(demo_text, [f"cluster.nodes={nodes}", "cluster.speed_factors=[]", "workload.num_requests=20"])
row("demo (EP8, graph model) at 1k / 2k / 4k / 8k GPUs: peak memory",
    " / ".join(f"{scale[n]['peak']:.0f}" for n in scale) + " MiB, " +
    " / ".join(f"{scale[n]['wall']:.1f}" for n in scale) + " s wall",
    "linear in GPUs (8k <= 12x 1k)", scale[1024]["peak"] <= 12 * scale[128]["peak"])

# Trace replay against synthetic routing in the same run (DeepSeek-V3 EP64, 2,000 requests): the trace is
# synthesised from the same config first.
ep64 = ('[run]\nseed = 1\n[model]\npreset = "deepseek-v3"\n[cluster]\npreset = "hgx-h200"\nnodes = 8\n'
        '[workload]\nrate_rps = 60\nnum_requests = 2000\n')
with tempfile.TemporaryDirectory() as d:
    cfg = os.path.join(d, "ep64.toml")
    with open(cfg, "w") as f:
        f.write(ep64)
    trace = os.path.join(d, "t.trace")
    run([epsim, "trace", "gen", cfg, "--out", trace, "--steps", "2000", "--tokens", "512"])
    synthetic = epsim_run(ep64)
    replay = epsim_run(ep64, ["routing.source=trace", f'routing.trace_file="{trace}"'])
row("trace replay vs synthetic routing, DeepSeek-V3 EP64 run",
    f"{replay['steps'] / replay['wall']:,.0f} vs {synthetic['steps'] / synthetic['wall']:,.0f} steps/s "
    f"({replay['x']:.0f}x vs {synthetic['x']:.0f}x real time)", "replay >= synthetic",
    replay["steps"] / replay["wall"] >= synthetic["steps"] / synthetic["wall"])
out, _, _ = run([os.path.join(bench, "trace_bench")])
for line in out.splitlines():
    m = re.search(r"(\d+) tokens/step: generate\s+(\d+) steps/s.*read\s+(\d+) steps/s", line)
    if m:
        row(f"trace file, {m.group(1)} tokens/step: generation vs streaming read",
            f"{int(m.group(2)):,} vs {int(m.group(3)):,} steps/s")

# Placement solvers.
out, _, _ = run([os.path.join(bench, "eplb_bench")])
m = re.search(r"([\d.]+) ms per solve", out)
row("EPLB, DeepSeek-V3 (58 x 256, 320 slots, 64 GPUs)", f"{float(m.group(1)):.2f} ms per solve",
    "~250x DeepSeek's reference (issue 19's measurement)")
out, _, _ = run([os.path.join(bench, "placement_bench")])
m = re.search(r"Llama-4-Scout.*GEM \(30 restarts\) ([\d.]+) s", out)
gem = float(m.group(1))
row("GEM, Llama-4-Scout (48 x 16 on 4 GPUs, 30 restarts)", f"{gem:.3f} s ({8.8 / gem:.0f}x the paper's 8.8 s)",
    "~260x faster than the paper's 8.8 s", 8.8 / gem >= 200)

# Issue 39: EPLB and GEM at Kimi-K2's 384 experts (64 GPUs; one NVL72 rack with 48 redundant slots) and
# Qwen3-Next's 512 (64 GPUs), one solve each (bench/placement_scale_bench with every policy: bench/README.md).
out, _, _ = run([os.path.join(bench, "placement_scale_bench"), "1", "eplb,gem"])
case = None
for line in out.splitlines():
    if not line.startswith(" "):
        case = line.split(" (")[0]
    m = re.match(r"\s+(eplb|gem)\s+([\d.]+) ms", line)
    if m and case:
        ms = float(m.group(2))
        row(f"{m.group(1).upper()}, {case}", f"{ms:.2f} ms per solve" if ms < 1000 else f"{ms / 1000:.2f} s per solve")

out, _, _ = run([os.path.join(bench, "director_bench")])
m = re.search(r"Qwen3-30B-A3B.*1 kind\s+bisect LP\s+([\d.]+) s \((\d+) solves\)", out)
row("DIRECTOR bisection, Qwen3-30B-A3B on 32 GPUs (48 layers)", f"{float(m.group(1)):.1f} s, {m.group(2)} LP solves",
    "warm-started, not ~720 LPs from scratch (182 s before)", int(m.group(2)) <= 4 * 48)

# Memory flat in run length: the same run 10x longer (the demo's Mixtral on 8 GPUs, 2,000 vs 20,000 requests).
demo = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "demo.toml")).read()
short = epsim_run(demo, ["workload.num_requests=2000", "run.max_sim_time_s=1e6"])
long = epsim_run(demo, ["workload.num_requests=20000", "run.max_sim_time_s=1e6"])
row("peak memory vs run length (demo config, 2,000 vs 20,000 requests)",
    f"{short['peak']:.0f} vs {long['peak']:.0f} MiB ({short['steps']:,} vs {long['steps']:,} steps)",
    "flat in run length (per-request state only)", long["peak"] <= short["peak"] + 32)

# Sweeps: the Monte Carlo example study cut to 8 replications (32 points of ~1 s) at -j 1 and -j 2.
study_text = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "studies",
                               "montecarlo-variability.toml")).read().replace("replications = 30", "replications = 8")
walls = {}
with tempfile.TemporaryDirectory() as d:
    study = os.path.join(d, "mc.toml")
    with open(study, "w") as f:
        f.write(study_text)
    for j in (1, 2):
        _, walls[j], _ = run([epsim, "sweep", study, "--out", os.path.join(d, f"j{j}"), "-j", str(j), "--progress", "none"])
row("sweep of 32 Monte Carlo points (examples/studies/montecarlo-variability.toml, 8 replications): -j 2 vs -j 1",
    f"{walls[1] / walls[2]:.2f}x ({walls[1]:.1f} s -> {walls[2]:.1f} s wall)", ">= 1.8x on 2 cores",
    walls[1] / walls[2] >= 1.8)

# Engine recordings (bench/engines_import_bench), for the record.
out, _, _ = run([os.path.join(bench, "engines_import_bench")])
for line in out.splitlines():
    m = re.match(r"(\S+)\s+(\S+)\s+(\d+) steps\s+(\d+) steps/s\s+([\d.]+) MB/s.*peak RSS \+([\d.]+) MiB", line)
    if m:
        row(f"import {m.group(1)} ({m.group(2)})", f"{int(m.group(4)):,} steps/s, {m.group(5)} MB/s, +{m.group(6)} MiB")

print("| benchmark | measured | target | status |")
print("| --- | --- | --- | --- |")
for r in rows:
    print("| " + " | ".join(r) + " |")
