#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""How fast a GPU's power limiter slows compute-bound kernels, and whether idle gaps let it clock back up
(docs/reproductions.md, "Stress-dependent variability": the response time a DVFS model needs).

Runs back-to-back compute-bound GEMMs and times every kernel with CUDA events, so a kernel's duration
tracks the SM clock (a compute-bound GEMM's time is ~ 1 / clock):
  transient: after 2 s idle, 3 s of GEMMs: how the duration moves from the first kernels to steady state;
  duty:      bursts of B ms of GEMMs separated by idle gaps of B ms (50 % duty) and 4 B ms (20 %), for
             B in 2, 10, 50, 250 ms: the kernels' mean duration in the bursts against continuous running;
  lockstep:  20 ms bursts with short gaps (duty 100, 98, 95, 90, 80 %), each for 4 s after 2 s idle: the
             high-duty regime of expert-parallel steps, where GPUs differ in busy share only by their wait
             at the layers' barriers (opt-in: --experiments lockstep).
Also samples nvidia-smi (SM clock, power, power-cap throttling) every 20 ms beside it, when present.
Writes OUT/kernels.csv (experiment, dtype, rep, burst_ms, duty, index, start_ms, dur_ms) and
OUT/smi.csv. Needs PyTorch with CUDA; nothing is changed on the GPU (no clock or power setting).
    python3 tools/power/power_response.py --out DIR [--dtype bf16|fp8|both]"""
import argparse
import csv
import os
import subprocess
import time


def gemm_fn(torch, dtype, n):
    dev = "cuda"
    if dtype == "bf16":
        a = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        b = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        return lambda: torch.mm(a, b)
    a = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn)
    b = torch.randn(n, n, device=dev).to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0, device=dev)
    return lambda: torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)


def run_block(torch, fn, seconds, start_ev):
    """Back-to-back kernels for `seconds` of host time; returns [(start_ms, dur_ms)] from GPU events."""
    evs = []
    t0 = time.monotonic()
    while time.monotonic() - t0 < seconds:
        s = torch.cuda.Event(enable_timing=True)
        e = torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        evs.append((s, e))
        if len(evs) % 64 == 0:  # keep the queue short so host time tracks GPU time
            evs[-32][1].synchronize()
    torch.cuda.synchronize()
    return [(start_ev.elapsed_time(s), s.elapsed_time(e)) for s, e in evs]


def bursts(torch, fn, idle_s, seconds, burst_ms, gap_ms):
    """After `idle_s` idle, bursts of `burst_ms` of kernels `gap_ms` apart (none when 0) for `seconds` of
    host time; returns every kernel's (start_ms, dur_ms) from one start event."""
    time.sleep(idle_s)
    start = torch.cuda.Event(enable_timing=True)
    start.record()
    t_end = time.monotonic() + seconds
    kernels = []
    while time.monotonic() < t_end:
        kernels += run_block(torch, fn, burst_ms / 1000.0, start)
        if gap_ms > 0:
            time.sleep(gap_ms / 1000.0)
    return kernels


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--dtype", default="both", choices=["bf16", "fp8", "both"])
    ap.add_argument("--n", type=int, default=8192, help="square GEMM size (compute-bound)")
    ap.add_argument("--experiments", default="transient,duty", help="comma-separated: transient, duty, lockstep")
    args = ap.parse_args()
    import torch
    os.makedirs(args.out, exist_ok=True)
    smi = None
    smi_path = os.path.join(args.out, "smi.csv")
    try:
        smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw,"
                                "clocks_throttle_reasons.sw_power_cap,temperature.gpu",
                                "--format=csv,nounits", "-lms", "20"], stdout=open(smi_path, "w"),
                               stderr=subprocess.DEVNULL)
    except OSError:
        pass
    rows = []
    dtypes = ["bf16", "fp8"] if args.dtype == "both" else [args.dtype]
    experiments = set(args.experiments.split(","))
    for dtype in dtypes:
        fn = gemm_fn(torch, dtype, args.n)
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        for rep in range(3 if "transient" in experiments else 0):
            time.sleep(2.0)  # idle: the limiter's average power falls
            start = torch.cuda.Event(enable_timing=True)
            start.record()
            for i, (t, d) in enumerate(run_block(torch, fn, 3.0, start)):
                rows.append(("transient", dtype, rep, "", "", i, t, d))
        for burst_ms in (2, 10, 50, 250) if "duty" in experiments else ():
            for duty, gap_factor in ((0.5, 1.0), (0.2, 4.0)):
                for i, (t, d) in enumerate(bursts(torch, fn, 1.0, 2.5, burst_ms, gap_factor * burst_ms)):
                    rows.append(("duty", dtype, 0, burst_ms, duty, i, t, d))
        for duty in (1.0, 0.98, 0.95, 0.9, 0.8) if "lockstep" in experiments else ():
            for i, (t, d) in enumerate(bursts(torch, fn, 2.0, 4.0, 20, 20 * (1.0 - duty) / duty)):
                rows.append(("lockstep", dtype, 0, 20, duty, i, t, d))
    if smi is not None:
        smi.terminate()
    with open(os.path.join(args.out, "kernels.csv"), "w", newline="") as h:
        w = csv.writer(h)
        w.writerow(["experiment", "dtype", "rep", "burst_ms", "duty", "index", "start_ms", "dur_ms"])
        for r in rows:
            w.writerow([r[0], r[1], r[2], r[3], r[4], r[5], f"{r[6]:.4f}", f"{r[7]:.5f}"])
    print(f"{len(rows)} kernels; {torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
