# SPDX-License-Identifier: Apache-2.0
"""What bench/run_all.py and bench/fast_sampling.py share: running one child process with its own CPU time
and peak memory, and the step-loop benchmark's DeepSeek-V3 EP64 configuration."""

import os
import subprocess
import sys
import tempfile
import time

# step_loop_bench's base: prompts ~1,024 and outputs ~256 tokens, lognormal; 4,096 batch tokens, 128 seats.
STEP_BASE = ('[run]\nseed = 1\nmax_sim_time_s = 3600.0\n'
             '[workload.prompt_tokens]\ndistribution = "lognormal"\nmean = 1024\ncv = 0.5\nmin = 16\nmax = 8192\n'
             '[workload.output_tokens]\ndistribution = "lognormal"\nmean = 256\ncv = 0.5\nmin = 8\nmax = 2048\n'
             '[scheduler]\nmax_batch_tokens = 4096\nmax_running_requests = 128\nstep_overhead_us = 200.0\n'
             '[slo]\nttft_ms = 2000.0\ntpot_ms = 60.0\n')
# DeepSeek-V3 on 8 HGX H200 nodes (EP64); format with rate and n (requests).
EP64 = STEP_BASE + ('[model]\npreset = "deepseek-v3"\n[cluster]\npreset = "hgx-h200"\nnodes = 8\n'
                    '[workload]\nrate_rps = {rate}\nnum_requests = {n}\n')


def run_child(cmd, who, timeout=3600):
    """Runs cmd; returns (its output, wall seconds, its own peak RSS in MiB, its CPU seconds), the last two
    from the child's own rusage (os.wait4). Exits naming `who` when it fails or runs past `timeout`."""
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
                sys.exit(f"{who}: {' '.join(cmd)} ran past {timeout} s")
            time.sleep(0.02)
        wall = time.monotonic() - t0
        out.seek(0)
        text = out.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{who}: {' '.join(cmd)} failed:\n{text}")
    return text, wall, usage.ru_maxrss / 1024.0, usage.ru_utime + usage.ru_stime
