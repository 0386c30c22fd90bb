#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs every benchmark of bench/ (and the scale runs of issues 19 and 35) and prints Markdown tables: what
was measured, the target beside it, and whether it is met. Each measurement runs in a child process (its
CPU time and peak memory from its own rusage). Build the release preset first.
    python3 bench/run_all.py [BUILD_DIR] [--before BUILD_DIR] [--only SECTION,...] [--repeats N]
BUILD_DIR (default build/release) is "after". With --before (a release build of an older commit), the
speed table (issue 40's targets) runs every case on both builds in alternation (A B A B ...) and keeps each
one's least CPU time, so before and after come from one run of this script on one machine state.
Sections: speed (issue 40's step-loop targets), points (GEM and online DIRECTOR against EPLB at one
study point), legacy (the issue 19 / 35 table), all three by default; studies (the CPU time of every
example study as shipped: tens of CPU minutes per build) only when named.
"""

import argparse
import os
import re
import sys
import tempfile

from bench_child import EP64, STEP_BASE, run_child

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..")
ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("build", nargs="?", default="build/release")
ap.add_argument("--before", help="a release build directory of the commit to compare against")
ap.add_argument("--only", default="speed,points,legacy", help="comma-separated: speed, points, studies, legacy")
ap.add_argument("--repeats", type=int, default=2, help="runs per case and build (least CPU time kept)")
args = ap.parse_args()
sections = set(args.only.split(","))
for sec in sections - {"speed", "points", "studies", "legacy"}:
    sys.exit(f"run_all.py: unknown section '{sec}'; expected speed, points, studies or legacy")
build = args.build
bench = os.path.join(build, "bench")
epsim = os.path.join(build, "epsim")
rows = []  # (benchmark, measured, target, status)


def run(cmd, timeout=3600):
    """Runs cmd; returns (its output, wall seconds, its own peak RSS in MiB, its CPU seconds, from wait4)."""
    return run_child(cmd, "run_all.py", timeout)


def row(name, measured, target="", met=None):
    rows.append((name, measured, target, "" if met is None else ("met" if met else "not met")))


def print_table(title):
    print(f"\n### {title}\n")
    print("| benchmark | measured | target | status |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        print("| " + " | ".join(r) + " |")
    rows.clear()
    sys.stdout.flush()


def epsim_run(toml_text, sets=(), binary=None):
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "c.toml")
        with open(cfg, "w") as f:
            f.write(toml_text)
        cmd = [binary or epsim, "run", cfg, "--out", os.path.join(d, "out")]
        for s in sets:
            cmd += ["--set", s]
        out, wall, peak, cpu = run(cmd)
    m = re.search(r"requests: (\d+) finished of (\d+) in ([\d.]+) s simulated \((\d+) steps", out)
    x = re.search(r"\(([\d.]+)x real time\)", out)
    slo = re.search(r"attainment ([\d.]+) %", out)
    return {"slo": float(slo.group(1)) if slo else float("nan"), "finished": int(m.group(1)), "sim_s": float(m.group(3)), "steps": int(m.group(4)),
            "x": float(x.group(1)) if x else 0.0, "wall": wall, "peak": peak, "cpu": cpu}


def paired(measure):
    """measure(binary) -> dict with "cpu"; returns {"after": best, "before": best or None}, each the run of
    least CPU time over --repeats, the builds alternating so both see the same machine state."""
    binaries = {"after": epsim}
    if args.before:
        binaries["before"] = os.path.join(args.before, "epsim")
    best = {k: None for k in ("after", "before")}
    for _ in range(max(1, args.repeats)):
        for k, b in binaries.items():
            r = measure(b)
            if best[k] is None or r["cpu"] < best[k]["cpu"]:
                best[k] = r
    return best


def before_after(best, fmt_one):
    """'after (before: ...)' text of a paired measurement."""
    text = fmt_one(best["after"])
    if best["before"] is not None:
        text += f"; before: {fmt_one(best['before'])}"
    return text


def x_cpu(r):
    return r["sim_s"] / r["cpu"] if r["cpu"] > 0 else 0.0


def fmt_x(r):
    return f"{x_cpu(r):,.0f}x real time per CPU s ({r['steps']:,} steps, {r['cpu']:.2f} CPU s)"


# Issue 40's targets: CPU time of whole processes, simulated seconds per CPU second.
# step_loop_bench's base (prompts ~1,024 and outputs ~256 tokens, lognormal; 4,096 batch tokens, 128 seats).
if "speed" in sections:
    sustainable = paired(lambda b: epsim_run(EP64.format(rate=2.2, n=1000), binary=b))
    row(f"DeepSeek-V3 EP64 (64 x H200), sustainable 2.2 req/s (SLO {sustainable['after']['slo']:.0f} %), 1,000 requests",
        before_after(sustainable, fmt_x),
        ">= 500x", x_cpu(sustainable["after"]) >= 500)
    overloaded = paired(lambda b: epsim_run(EP64.format(rate=60, n=4000), binary=b))
    row("DeepSeek-V3 EP64, overloaded 60 req/s, 4,000 requests (step_loop_bench's workload)",
        before_after(overloaded, fmt_x), ">= 400x", x_cpu(overloaded["after"]) >= 400)
    # Issue 40's opt-in approximate mode on the same run (its error: bench/fast_sampling.py).
    fast = paired(lambda b: epsim_run(EP64.format(rate=60, n=4000), ['routing.sampling="fast"'], binary=b))
    row('the same overloaded run with routing.sampling = "fast" (opt-in approximate mode)',
        before_after(fast, fmt_x), ">= 1,000x", x_cpu(fast["after"]) >= 1000)
    # The exact Poissonised draws (vector kernels, the widest instruction set this CPU runs).
    poisson = paired(lambda b: epsim_run(EP64.format(rate=60, n=4000), ['routing.sampling="poisson"'], binary=b))
    row('the same overloaded run with routing.sampling = "poisson" (exact; vector kernels)',
        before_after(poisson, fmt_x) + f"; {overloaded['after']['cpu'] / poisson['after']['cpu']:.2f}x less CPU "
        "than exact", ">= 400x", x_cpu(poisson["after"]) >= 400)
    deepep = ["communication.algorithm=\"deepep_normal\"", "communication.overlap=\"two_batch\""]
    tbo = paired(lambda b: epsim_run(EP64.format(rate=60, n=4000), deepep, binary=b))
    ratio = {k: (tbo[k]["cpu"] / overloaded[k]["cpu"] if tbo[k] else None) for k in tbo}
    row("DeepEP normal + two-batch overlap: CPU against the same run without them",
        f"{ratio['after']:.2f}x" + (f"; before: {ratio['before']:.2f}x" if ratio["before"] else ""), "<= 1.5x",
        ratio["after"] <= 1.5)
    disagg = open(os.path.join(root, "examples", "deployments", "sglang-disaggregated.toml")).read()
    r = paired(lambda b: epsim_run(disagg, binary=b))
    row("examples/deployments/sglang-disaggregated.toml", before_after(r, fmt_x), ">= 200x",
        x_cpu(r["after"]) >= 200)
    nvl72 = STEP_BASE + ('[model]\npreset = "deepseek-v3"\n[cluster]\npreset = "gb200-nvl72"\nnodes = 1\n'
                         '[parallel]\nredundant_experts = 32\n[workload]\nrate_rps = 80\nnum_requests = 4000\n')
    r = paired(lambda b: epsim_run(nvl72, binary=b))
    row("DeepSeek-V3 on a GB200 NVL72 rack (EP72, 32 redundant), 80 req/s, 4,000 requests", before_after(r, fmt_x),
        ">= 200x", x_cpu(r["after"]) >= 200)
    demo_text = open(os.path.join(root, "examples", "demo.toml")).read()
    r = paired(lambda b: epsim_run(demo_text, binary=b))
    row("the demo (examples/demo.toml)", before_after(r, fmt_x), ">= 100x", x_cpu(r["after"]) >= 100)
    ep1024 = ('[run]\nmax_sim_time_s = 1e6\n[model]\npreset = "deepseek-v3"\n[cluster]\npreset = "hgx-h200"\nnodes = 128\n'
              'collective_model = "ports"\n[workload]\nnum_requests = 20000\nrate_rps = 400\n[policy]\n'
              'placement = "replicated"\n[parallel]\nredundant_experts = 768\n')
    r = paired(lambda b: epsim_run(ep1024, binary=b))
    per_step = {k: (r[k]["cpu"] / r[k]["steps"] * 1e6 if r[k] else None) for k in r}
    row("EP1024 DeepSeek-V3, 20,000 requests at 400 req/s: CPU per step",
        f"{per_step['after']:,.0f} us" + (f"; before: {per_step['before']:,.0f} us" if per_step["before"] else ""),
        "halved", None if per_step["before"] is None else per_step["after"] <= 0.5 * per_step["before"])
    rp = paired(lambda b: epsim_run(ep1024, ['routing.sampling="poisson"'], binary=b))
    row('the same EP1024 run with routing.sampling = "poisson": CPU per step',
        f"{rp['after']['cpu'] / rp['after']['steps'] * 1e6:,.0f} us", "halved",
        None if per_step["before"] is None else rp["after"]["cpu"] / rp["after"]["steps"] * 1e6 <= 0.5 * per_step["before"])
    # Trace replay against synthetic routing at the sustainable load: a trace of small steps (64 tokens, about
    # a decode batch at 2.2 req/s), synthesised from the same config.
    with tempfile.TemporaryDirectory() as d:
        cfg = os.path.join(d, "ep64.toml")
        with open(cfg, "w") as f:
            f.write(EP64.format(rate=2.2, n=1000))
        trace = os.path.join(d, "t.trace")
        run([epsim, "trace", "gen", cfg, "--out", trace, "--steps", "4000", "--tokens", "64"])
        replay = paired(lambda b: epsim_run(EP64.format(rate=2.2, n=1000),
                                            ["routing.source=trace", f'routing.trace_file="{trace}"'], binary=b))
    row("trace replay (64-token steps) at the sustainable load: x real time per CPU s against synthetic",
        before_after(replay, fmt_x), "replay >= synthetic",
        x_cpu(replay["after"]) >= x_cpu(sustainable["after"]))
    print_table("Issue 40: the step loop (CPU time, least of the runs" +
                (", before = " + args.before if args.before else "") + ")")


def sweep_cpu(study_text, binary):
    with tempfile.TemporaryDirectory() as d:
        study = os.path.join(d, "study.toml")
        with open(study, "w") as f:
            f.write(study_text)
        _, wall, peak, cpu = run([binary, "sweep", study, "--out", os.path.join(d, "out"), "-j", "1",
                                  "--progress", "none"], timeout=4 * 3600)
    return {"cpu": cpu, "wall": wall, "peak": peak}


study_dir = os.path.join(root, "examples", "studies")
if "studies" in sections:
    # Every example study as shipped, one process at -j 1 (its CPU is the sum over its runs).
    for name in sorted(os.listdir(study_dir)):
        if not name.endswith(".toml"):
            continue
        text = open(os.path.join(study_dir, name)).read()
        r = paired(lambda b: sweep_cpu(text, b))
        row(f"example study {name}", before_after(r, lambda x: f"{x['cpu'] / 60:.1f} CPU min"), "< 2 CPU min",
            r["after"]["cpu"] < 120)
    print_table("Issue 40: example studies (CPU time of `epsim sweep -j 1`" +
                (", before = " + args.before if args.before else "") + ")")
if "points" in sections:
    # GEM and online DIRECTOR against EPLB at one point of the compare example (400 req/s, one replication).
    compare = open(os.path.join(study_dir, "compare-policies.toml")).read()
    compare = re.sub(r"replications = \d+", "replications = 1", compare)
    compare = re.sub(r"values = \[325\.0[^\]]*\]", "values = [400.0]", compare)
    point = {}
    for policy in ("eplb", "gem", "director"):
        text = re.sub(r'policies = \[[^\]]*\]', f'policies = ["{policy}"]', compare)
        text = re.sub(r'baseline = "[^"]*"', f'baseline = "policy={policy}"', text)
        point[policy] = paired(lambda b: sweep_cpu(text, b))
    for policy in ("gem", "director"):
        ratio = {k: (point[policy][k]["cpu"] / point["eplb"][k]["cpu"] if point[policy][k] else None)
                 for k in ("after", "before")}
        row(f"{policy.upper()} against EPLB, CPU of one compare-policies point (OLMoE, 8 x H100, 400 req/s)",
            f"{ratio['after']:.1f}x" + (f"; before: {ratio['before']:.1f}x" if ratio["before"] else ""), "<= 3x",
            ratio["after"] <= 3)
    print_table("Issue 40: policies at one study point (CPU time of `epsim sweep -j 1`" +
                (", before = " + args.before if args.before else "") + ")")
if "legacy" in sections:
    # Step loop (bench/step_loop_bench): whole simulations.
    out, _, _, _ = run([os.path.join(bench, "step_loop_bench")])
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
    out, _, _, _ = run([os.path.join(bench, "trace_bench")])
    for line in out.splitlines():
        m = re.search(r"(\d+) tokens/step: generate\s+(\d+) steps/s.*read\s+(\d+) steps/s", line)
        if m:
            row(f"trace file, {m.group(1)} tokens/step: generation vs streaming read",
                f"{int(m.group(2)):,} vs {int(m.group(3)):,} steps/s")

    # Placement solvers.
    out, _, _, _ = run([os.path.join(bench, "eplb_bench")])
    m = re.search(r"([\d.]+) ms per solve", out)
    row("EPLB, DeepSeek-V3 (58 x 256, 320 slots, 64 GPUs)", f"{float(m.group(1)):.2f} ms per solve",
        "~250x DeepSeek's reference (issue 19's measurement)")
    out, _, _, _ = run([os.path.join(bench, "placement_bench")])
    m = re.search(r"Llama-4-Scout.*GEM \(30 restarts\) ([\d.]+) s", out)
    gem = float(m.group(1))
    row("GEM, Llama-4-Scout (48 x 16 on 4 GPUs, 30 restarts)", f"{gem:.3f} s ({8.8 / gem:.0f}x the paper's 8.8 s)",
        "~260x faster than the paper's 8.8 s", 8.8 / gem >= 200)

    # Issue 39: EPLB and GEM at Kimi-K2's 384 experts (64 GPUs; one NVL72 rack with 48 redundant slots) and
    # Qwen3-Next's 512 (64 GPUs), one solve each (bench/placement_scale_bench with every policy: bench/README.md).
    out, _, _, _ = run([os.path.join(bench, "placement_scale_bench"), "1", "eplb,gem"])
    case = None
    for line in out.splitlines():
        if not line.startswith(" "):
            case = line.split(" (")[0]
        m = re.match(r"\s+(eplb|gem)\s+([\d.]+) ms", line)
        if m and case:
            ms = float(m.group(2))
            row(f"{m.group(1).upper()}, {case}", f"{ms:.2f} ms per solve" if ms < 1000 else f"{ms / 1000:.2f} s per solve")

    out, _, _, _ = run([os.path.join(bench, "director_bench")])
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
            _, walls[j], _, _ = run([epsim, "sweep", study, "--out", os.path.join(d, f"j{j}"), "-j", str(j), "--progress", "none"])
    row("sweep of 32 Monte Carlo points (examples/studies/montecarlo-variability.toml, 8 replications): -j 2 vs -j 1",
        f"{walls[1] / walls[2]:.2f}x ({walls[1]:.1f} s -> {walls[2]:.1f} s wall)", ">= 1.8x on 2 cores",
        walls[1] / walls[2] >= 1.8)

    # Engine recordings (bench/engines_import_bench), for the record.
    out, _, _, _ = run([os.path.join(bench, "engines_import_bench")])
    for line in out.splitlines():
        m = re.match(r"(\S+)\s+(\S+)\s+(\d+) steps\s+(\d+) steps/s\s+([\d.]+) MB/s.*peak RSS \+([\d.]+) MiB", line)
        if m:
            row(f"import {m.group(1)} ({m.group(2)})", f"{int(m.group(4)):,} steps/s, {m.group(5)} MB/s, +{m.group(6)} MiB")

    print_table("Issues 19 and 35: scale, memory, solvers and sweeps")
