#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the public-measurement tables in this folder from the numbers transcribed below.

Every number here was read from the source named next to it (see README.md for the citations,
commits and conversions). Run from the repository root:
    python3 data/profiles/build_public.py
It uses tools/profile/table.py for the row rules, so every row is valid for epsim's reader.
"""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "profile"))

import table  # noqa: E402

OUT_DIR = os.path.dirname(os.path.abspath(__file__))
CORE = [c for c in table.CORE_COLUMNS]
HEADER = CORE + ["source", "kernel", "causal", "groups", "note"]


def row(op, gpu, latency_us, shape, source, kernel="", causal="", groups="", note=""):
    r = table.make_row(op, gpu, latency_us, shape)
    out = {c: r[c] for c in CORE}
    out.update(source=source, kernel=kernel, causal=causal, groups=groups, note=note)
    return out


# ---------------------------------------------------------------------------------------------
# DeepGEMM README, commit 327ec92f6977e7fee022cb76a8f273b75483c3d8 (2025-04-09), "Performance":
# FP8 GEMMs on H800 SXM5, NVCC 12.8. Columns: M, N, K, TFLOPS (tests/test_core.py at that commit
# computes TFLOPS = 2*M*N*K / t, grouped: 2*groups*M*N*K / t).
# ---------------------------------------------------------------------------------------------
DEEPGEMM_NORMAL = [  # (M, N, K, TFLOPS)
    (64, 2112, 7168, 206), (64, 24576, 1536, 289), (64, 32768, 512, 219),
    (64, 7168, 16384, 336), (64, 4096, 7168, 287), (64, 7168, 2048, 295),
    (128, 2112, 7168, 352), (128, 24576, 1536, 535), (128, 32768, 512, 358),
    (128, 7168, 16384, 645), (128, 4096, 7168, 533), (128, 7168, 2048, 510),
    (4096, 2112, 7168, 1127), (4096, 24576, 1536, 1212), (4096, 32768, 512, 775),
    (4096, 7168, 16384, 1520), (4096, 4096, 7168, 1410), (4096, 7168, 2048, 1168),
]
DEEPGEMM_CONTIGUOUS = [  # (groups, M per group, N, K, TFLOPS)
    (4, 8192, 4096, 7168, 1346), (4, 8192, 7168, 2048, 1214),
    (8, 4096, 4096, 7168, 1346), (8, 4096, 7168, 2048, 1214),
]
DEEPGEMM_MASKED = [  # (groups, M per group, N, K, TFLOPS)
    (1, 1024, 4096, 7168, 1233), (1, 1024, 7168, 2048, 925),
    (2, 512, 4096, 7168, 1040), (2, 512, 7168, 2048, 916),
    (4, 256, 4096, 7168, 932), (4, 256, 7168, 2048, 815),
]


def deepgemm_rows():
    plain, grouped = [], []
    for m, n, k, tflops in DEEPGEMM_NORMAL:
        us = 2.0 * m * n * k / (tflops * 1e6)
        plain.append(row("dense_gemm", "h100", us, dict(m=m, n=n, k=k, dtype="fp8"), "deepgemm-readme",
                         kernel="deepgemm_fp8_gemm_nt",
                         note=f"H800 SXM5; latency = 2*M*N*K / {tflops} TFLOPS (README gives TFLOPS only)"))
    for layout, rows_ in (("contiguous", DEEPGEMM_CONTIGUOUS), ("masked", DEEPGEMM_MASKED)):
        for g, m, n, k, tflops in rows_:
            us = 2.0 * g * m * n * k / (tflops * 1e6)
            grouped.append(row("dense_gemm", "h100", us, dict(m=m, n=n, k=k, dtype="fp8"), "deepgemm-readme",
                               kernel=f"deepgemm_m_grouped_fp8_{layout}", groups=g,
                               note=(f"H800 SXM5; ONE call over {g} groups of M={m} (m column is per group); "
                                     f"latency = 2*groups*M*N*K / {tflops} TFLOPS")))
    return plain, grouped, expert_ffn_rows()


def expert_ffn_rows():
    """One row per (layout, groups, M): the gate+up call plus the down call of the same groups and M,
    i.e. the two GEMMs of `groups` DeepSeek-V3 experts (hidden 7168, intermediate 2048) over M tokens
    each, as one expert_ffn measurement. The SiLU-and-multiply between them is not in the tables."""
    out = []
    for layout, rows_ in (("contiguous", DEEPGEMM_CONTIGUOUS), ("masked", DEEPGEMM_MASKED)):
        calls = {}
        for g, m, n, k, tflops in rows_:
            calls.setdefault((g, m), []).append((n, k, tflops))
        for (g, m), parts in calls.items():
            assert sorted((n, k) for n, k, _ in parts) == [(4096, 7168), (7168, 2048)], parts
            us = sum(2.0 * g * m * n * k / (t * 1e6) for n, k, t in parts)
            tf = " + ".join(f"{n}x{k} at {t}" for n, k, t in parts)
            out.append(row("expert_ffn", "h100", us,
                           dict(tokens=g * m, experts=g, top_k=1, hidden=7168, intermediate=2048, dtype="fp8",
                                active_experts=g),
                           "deepgemm-readme", kernel=f"deepgemm_m_grouped_fp8_{layout}", groups=g,
                           note=(f"H800 SXM5; {g} experts x M={m} tokens each: gate+up and down grouped calls "
                                 f"summed ({tf} TFLOPS); no SiLU/quantisation kernel")))
    return out


# ---------------------------------------------------------------------------------------------
# FlashAttention-3 forward speed on H100 80GB SXM5, FP16, bar labels in TFLOPs/s, read from
# Dao-AILab/flash-attention assets/flash3_fp16_fwd.png (added in commit 7ef24848, 2024-07-11;
# the FlashAttention-3 paper's forward-pass benchmark figure). Setup (repo README and
# benchmarks/benchmark_flash_attention.py): hidden 2048 = heads x head_dim, batch = 16384 / seqlen,
# self-attention; FLOPs = 4 * batch * seqlen^2 * heads * head_dim, halved when causal.
# None = label not legible (hidden behind the legend), row left out.
# ---------------------------------------------------------------------------------------------
SEQLENS = (512, 1024, 2048, 4096, 8192, 16384)
FA_FIGURE = {  # (head_dim, causal) -> kernel -> TFLOPs/s per SEQLENS
    (64, False): {"flash_attn_3": (333, 392, 460, 476, 496, 497),
                  "flash_attn_2": (282, 306, 318, 321, 322, 324)},
    (64, True): {"flash_attn_3": (197, 265, 371, 420, 460, 473),
                 "flash_attn_2": (180, 229, 262, 284, 295, 299)},
    (128, False): {"flash_attn_3": (467, 565, 625, 638, 646, 648),
                   "flash_attn_2": (309, 350, 362, 368, 370, 370),
                   "cudnn": (None, None, 617, 609, 600, 595)},
    (128, True): {"flash_attn_3": (292, 423, 521, 579, 602, 616),
                  "flash_attn_2": (191, 260, 298, 319, 333, 335),
                  "cudnn": (315, 410, 484, 518, 529, 539)},
    (256, False): {"flash_attn_3": (482, None, 707, 736, 746, 756),
                   "flash_attn_2": (275, 313, 321, 323, 324, 326),
                   "cudnn": (470, 546, 580, 581, 580, 581)},
    (256, True): {"flash_attn_3": (286, 427, 537, 612, 628, 642),
                  "flash_attn_2": (208, 251, 278, 293, 297, 298),
                  "cudnn": (308, 391, 450, 483, 497, 509)},
}


def attention_rows():
    best, alt = [], []
    for (d, causal), kernels in FA_FIGURE.items():
        heads = 2048 // d
        for kernel, values in kernels.items():
            for s, tflops in zip(SEQLENS, values):
                if tflops is None:
                    continue
                b = 16384 // s
                flops = 4.0 * b * s * s * heads * d / (2.0 if causal else 1.0)
                us = flops / (tflops * 1e6)
                r = row("attention_prefill", "h100", us,
                        dict(batch=b, q_tokens=s, kv_tokens=s, heads=heads, kv_heads=heads, head_dim=d, dtype="bf16"),
                        "fa3-figure", kernel=kernel, causal="1" if causal else "0",
                        note=(f"H100 80GB SXM5, measured in FP16 (same tensor-core rate as BF16); latency = "
                              f"{'2' if causal else '4'}*batch*seqlen^2*heads*head_dim / {tflops} TFLOPs/s"))
                (best if kernel == "flash_attn_3" else alt).append(r)
    return best, alt


# ---------------------------------------------------------------------------------------------
# DeepEP docs/legacy.md (V1 performance), commit dd758caf451848bd150e1046af3d0a73e5fff38d:
# low-latency kernels with pure RDMA on H800, one CX7 400 Gb/s InfiniBand NIC per GPU;
# 128 tokens per batch, hidden 7168, top-8 experts, FP8 dispatch, BF16 combine.
# (EP, dispatch latency us, dispatch GB/s, combine latency us, combine GB/s)
# ---------------------------------------------------------------------------------------------
DEEPEP_LL = [(8, 77, 98, 114, 127), (16, 118, 63, 195, 74), (32, 155, 48, 273, 53), (64, 173, 43, 314, 46)]
DEEPEP_TOKENS, DEEPEP_HIDDEN, DEEPEP_TOPK = 128, 7168, 8


def deepep_rows():
    out = []
    # Bytes each GPU sends: one copy of every token per selected expert. Dispatch: FP8 hidden plus
    # one fp32 scale per 128 channels; combine: BF16 hidden.
    dispatch_bytes = DEEPEP_TOKENS * DEEPEP_TOPK * (DEEPEP_HIDDEN + DEEPEP_HIDDEN // 128 * 4)
    combine_bytes = DEEPEP_TOKENS * DEEPEP_TOPK * DEEPEP_HIDDEN * 2
    for ep, d_us, d_bw, c_us, c_bw in DEEPEP_LL:
        for what, us, bw, nbytes in (("dispatch", d_us, d_bw, dispatch_bytes), ("combine", c_us, c_bw, combine_bytes)):
            out.append(row("all_to_all", "h800", us, dict(bytes=nbytes, gpus=ep, gpus_per_node=8, cluster="ib-cx7-400g"),
                           "deepep-legacy", kernel=f"deepep_low_latency_{what}",
                           note=(f"H800, pure RDMA (no NVLink used, also within a node); EP{ep} {what} of 128 tokens "
                                 f"x top-8 x hidden 7168 ({'FP8 + scales' if what == 'dispatch' else 'BF16'}); "
                                 f"latency as published; bytes derived from the config (published {bw} GB/s x "
                                 f"{us} us = {bw * us / 1e3:.2f} MB)")))
    return out


# ---------------------------------------------------------------------------------------------
# LMSYS blog "Deploying DeepSeek with PD Disaggregation and Large-scale Expert Parallelism on 96 H100
# GPUs" (SGLang team, 2025-05-05), section "Profile Results / Detail Breakdown": the bar charts
# images/blog/large_scale_ep/profile-decode.png and profile-prefill.png (lm-sys/lm-sys.github.io),
# "Scaled Mean Time (ms) per Layer" per kernel category. Bar ends were measured in pixels against the
# charts' grid lines (decode: 482.9 px per ms, prefill: 15.43 px per ms), so each value carries about
# +-0.002 ms (decode) and +-0.07 ms (prefill) of reading error. Categories a series has no bar for
# are left out. Series (blog text): DeepSeek's public profile (H800; prefill EP32, 16,384 tokens per
# GPU, 4K prompts; decode EP128, 128 requests per GPU, 4K context, with MTP), SGLang on H100 (prefill
# EP32 on 4 nodes, same batch, default EPLB; decode EP72 on 9 nodes, 256 requests per GPU, 2,000-token
# context), SGLang with simulated perfect EPLB (prefill) or simulated slow attention (decode: MTP's
# attention, dummy kernels added), and unit tests of the kernels alone.
# ---------------------------------------------------------------------------------------------
BREAKDOWN_SERIES = ("unit_test", "deepseek_profile", "sglang", "sglang_variant")
BREAKDOWN = {  # (phase, category, stream) -> ms per layer per BREAKDOWN_SERIES (None: no bar)
    ("decode", "overall", "both"): (None, 1.421, 1.487, 1.549),
    ("decode", "dispatch", "compute"): (0.060, 0.172, 0.168, 0.164),
    ("decode", "combine", "compute"): (0.077, 0.073, 0.174, 0.085),
    ("decode", "moe", "compute"): (0.193, 0.242, 0.300, 0.300),
    ("decode", "attention_core", "compute"): (None, 0.501, 0.358, 0.493),
    ("decode", "gemm", "compute"): (None, 0.290, 0.286, 0.298),
    ("decode", "other_kernels", "compute"): (None, 0.083, 0.135, 0.135),
    ("decode", "launch_overhead", "compute"): (None, 0.046, 0.052, 0.058),
    ("prefill", "overall", "both"): (None, 34.60, 42.84, 36.29),
    ("prefill", "dispatch_barrier", "communication"): (None, 2.06, 2.71, 3.23),
    ("prefill", "dispatch_core", "communication"): (7.24, 9.45, 16.71, 10.81),
    ("prefill", "combine_barrier", "communication"): (None, 1.99, 2.19, 1.60),
    ("prefill", "combine_core", "communication"): (14.25, 17.23, 20.02, 14.96),
    ("prefill", "moe", "compute"): (11.07, 12.37, 10.49, 12.24),
    ("prefill", "attention_core", "compute"): (None, 5.62, 5.69, 6.47),
    ("prefill", "gemm", "compute"): (None, 8.41, 8.80, 9.51),
    ("prefill", "other_kernels", "compute"): (None, 5.11, 6.14, 6.60),
    ("prefill", "compute_stream_bubble", "compute"): (None, 2.45, 11.26, 1.22),
    ("prefill", "communication_stream_bubble", "communication"): (None, 3.61, 0.89, 5.49),
}
BREAKDOWN_HEADER = ["phase", "category", "stream", "series", "ms_per_layer", "source", "note"]
BREAKDOWN_NOTES = {
    "unit_test": "the kernel alone (DeepEP / DeepGEMM unit tests), as charted by the blog",
    "deepseek_profile": "DeepSeek's public profile (H800; prefill EP32 16,384 tokens/GPU 4K; decode EP128 128 req/GPU 4K MTP)",
    "sglang": "SGLang on H100 (prefill EP32 4 nodes 16,384 tokens/GPU 4K default EPLB; decode EP72 9 nodes 256 req/GPU 2K)",
    "sglang_variant": "SGLang on H100 with simulated perfect EPLB (prefill) / simulated slow attention (decode)",
}


def breakdown_rows():
    out = []
    for (phase, category, stream), values in BREAKDOWN.items():
        for series, ms in zip(BREAKDOWN_SERIES, values):
            if ms is None:
                continue
            out.append(dict(phase=phase, category=category, stream=stream, series=series, ms_per_layer=f"{ms:g}",
                            source="lmsys-large-scale-ep", note=BREAKDOWN_NOTES[series]))
    return out


# ---------------------------------------------------------------------------------------------
# stas00/ml-engineering, compute/accelerator/README.md at commit
# 7bc7c3054eb93c277a4755c597ae0864d77a63f1 (2026-08-10), section "Maximum Achievable Matmul FLOPS
# comparison table": one torch.mm (BF16) or torch._scaled_mm (FP8 e4m3) per accelerator, the best
# of a shape search, "a mean of 100 iterations after 50 warmup iterations for each shape".
# compute/accelerator/benchmarks/mamf-finder.py (same commit) prints the shape as MxNxK and computes
# TFLOPS = 2*M*N*K / mean time, so latency_us = 2*M*N*K / (TFLOPS * 1e6).
# Only the rows of GPUs epsim has a preset for (A100 PCIe, GH200, B300, MI355X and Gaudi are left out).
# (preset, accelerator as named in the table, dtype, MAMF TFLOPS, M, N, K, software)
# ---------------------------------------------------------------------------------------------
MAMF = [
    ("a100", "NVIDIA A100 SXM", "bf16", 271.2, 1024, 10240, 5120, "torch 2.6.0+cu126"),
    ("h100", "NVIDIA H100 SXM", "bf16", 794.5, 2048, 2048, 13312, "torch 2.7.0+cu126"),
    ("h100", "NVIDIA H100 SXM", "fp8", 1402.6, 1024, 9216, 14336, "torch 2.7.0+cu126"),
    ("h200", "NVIDIA H200 SXM", "fp8", 1453.4, 1280, 4096, 12032, "torch 2.7.1+cu128"),
    ("b200", "NVIDIA B200 SXM", "bf16", 1745.0, 1792, 16128, 3072, "torch 2.7.1+cu128"),
    ("b200", "NVIDIA B200 SXM", "fp8", 3432.5, 15360, 4096, 3072, "torch 2.7.1+cu128"),
    ("gb200", "NVIDIA GB200 SXM", "bf16", 1822.0, 4096, 9728, 2048, "torch 2.10.0.dev20250916+cu130"),
    ("gb200", "NVIDIA GB200 SXM", "fp8", 3615.6, 19456, 5120, 1536, "torch 2.10.0.dev20250916+cu130"),
    ("mi300x", "AMD MI300X", "bf16", 668.4, 10240, 15360, 8192, "torch 2.5.1+6.3.42131, PYTORCH_TUNABLEOP_ENABLED=1"),
    ("mi325x", "AMD MI325X", "bf16", 784.9, 13312, 10240, 8192, "torch 2.6.0+6.2.4, PYTORCH_TUNABLEOP_ENABLED=1, 1000W"),
]
MAMF_GPUS = ("a100", "h100", "h200", "b200", "gb200", "mi300x", "mi325x")


def mamf_rows():
    """Rows per preset name: each the best-shape matmul of one accelerator and dtype."""
    out = {g: [] for g in MAMF_GPUS}
    for gpu, accel, dtype, tflops, m, n, k, sw in MAMF:
        us = 2.0 * m * n * k / (tflops * 1e6)
        kernel = "torch_scaled_mm" if dtype == "fp8" else "torch_mm"
        out[gpu].append(row("dense_gemm", gpu, us, dict(m=m, n=n, k=k, dtype=dtype), "mamf-table", kernel=kernel,
                            note=(f"{accel}, {sw}; best shape of a search (MxNxK); mean of 100 iterations; "
                                  f"latency = 2*M*N*K / {tflops} TFLOPS")))
    return out


# ---------------------------------------------------------------------------------------------
# vLLM pull request #24700 ("[Perf] Improve default fused moe configs by analyzing tuned configs",
# mgoin, 2025-09-11), section "Benchmarks on H100": output of benchmarks/kernels/benchmark_moe.py,
# "Kernel time" per batch size = mean time of one fused_moe call (routing top-k, block alignment, both
# Triton grouped GEMMs, SiLU-and-multiply, the top-k sum), timed as CUDA-graph replays of 10 calls.
# GPU: NVIDIA_H100_80GB_HBM3 (the config file name in the log: H100 SXM5). Random gating logits.
# (model, dtype, experts, per-rank intermediate N, hidden K, top_k, which run, {batch: us})
# ---------------------------------------------------------------------------------------------
VLLM_FUSED_MOE_H100 = [
    ("Mixtral-8x7B-Instruct-v0.1, tp=2", "bf16", 8, 7168, 4096, 2, "tuned config (E=8,N=7168 H100 file)",
     {1: 144.03, 2: 229.28, 4: 351.10, 8: 434.98, 16: 471.49, 24: 478.27, 32: 487.35, 48: 487.85, 64: 483.14,
      96: 494.42, 128: 491.39, 256: 536.77, 512: 662.33, 1024: 833.72, 1536: 1122.93}),
    ("Qwen3-30B-A3B, tp=1, --dtype=fp8_w8a8", "fp8", 128, 768, 2048, 8, "vLLM main before the PR",
     {1: 44.54, 2: 59.94, 4: 90.46, 8: 129.77, 16: 185.40, 24: 215.99, 32: 238.37, 48: 257.83, 64: 262.73,
      96: 270.98, 128: 273.72, 256: 355.49, 512: 391.86, 1024: 536.33, 1536: 727.31, 2048: 911.64,
      3072: 1279.17, 4096: 1647.57}),
]


def vllm_fused_moe_rows():
    out = []
    for model, dtype, e, n, k, topk, run, times in VLLM_FUSED_MOE_H100:
        for batch, us in times.items():
            out.append(row("expert_ffn", "h100", us,
                           dict(tokens=batch, experts=e, top_k=topk, hidden=k, intermediate=n, dtype=dtype),
                           "vllm-pr-24700", kernel="vllm_fused_moe_triton",
                           note=(f"H100 80GB HBM3; {model}; {run}; benchmark_moe.py kernel time as published "
                                 f"(one fused_moe call incl. routing and activation, CUDA graph)")))
    return out


# ---------------------------------------------------------------------------------------------
# cuBLAS FP16 GEMMs on H100 as printed by Triton's matmul benchmarks (the "cuBLAS" column is
# torch.matmul timed by triton.testing.do_bench, median; TFLOPS = 2*M*N*K / time):
#  - triton-lang/triton issue #3672 (vmarkovtsev, 2024-04-16), tutorial 03-matrix-multiplication on
#    "H100 and float16", square M = N = K = 256..3072 (the rows legible in the issue);
#  - triton-lang/triton issue #2339 (tgale96, 2023-09-19), tutorial 10 on H100, M = 2048.
# (issue, M, N, K, cuBLAS TFLOPS)
# ---------------------------------------------------------------------------------------------
TRITON_ISSUE_CUBLAS_H100 = [
    (3672, 256, 256, 256, 4.112063), (3672, 384, 384, 384, 12.730015), (3672, 512, 512, 512, 28.630062),
    (3672, 640, 640, 640, 46.545454), (3672, 768, 768, 768, 74.504082), (3672, 896, 896, 896, 97.100854),
    (3672, 1024, 1024, 1024, 121.135128), (3672, 1152, 1152, 1152, 164.460392),
    (3672, 1280, 1280, 1280, 218.089858), (3672, 1408, 1408, 1408, 245.713850),
    (3672, 1536, 1536, 1536, 255.923638), (3672, 1664, 1664, 1664, 306.999136),
    (3672, 1792, 1792, 1792, 369.262381), (3672, 1920, 1920, 1920, 401.058924),
    (3672, 2048, 2048, 2048, 511.305649), (3672, 2176, 2176, 2176, 466.297406),
    (3672, 2304, 2304, 2304, 521.426951), (3672, 2432, 2432, 2432, 518.467603),
    (3672, 2560, 2560, 2560, 533.355017), (3672, 2688, 2688, 2688, 433.365881),
    (3672, 2816, 2816, 2816, 616.455234), (3672, 2944, 2944, 2944, 573.858596),
    (3672, 3072, 3072, 3072, 584.685150),
    (2339, 2048, 512, 512, 102.612946), (2339, 2048, 1024, 1024, 243.148053),
    (2339, 2048, 2048, 2048, 515.231193), (2339, 2048, 4096, 4096, 613.742094),
    (2339, 2048, 8192, 8192, 721.600670),
]


def triton_issue_cublas_rows():
    out = []
    for issue, m, n, k, tflops in TRITON_ISSUE_CUBLAS_H100:
        us = 2.0 * m * n * k / (tflops * 1e6)
        out.append(row("dense_gemm", "h100", us, dict(m=m, n=n, k=k, dtype="bf16"), f"triton-issue-{issue}",
                       kernel="cublas_torch_matmul",
                       note=(f"H100 (variant not stated), measured in FP16 (same tensor-core rate as BF16); "
                             f"do_bench median; latency = 2*M*N*K / {tflops} TFLOPS")))
    return out
# nccl-tests all_reduce_perf outputs (float sum, out-of-place time) published by Oracle's OCI HPC
# tutorials (oracle-japan/ocitutorials). One rank per GPU (mpirun), NCCL's default algorithm choice.
# OCI's nodes match epsim's presets per node: BM.GPU.H100.8 has 8 H100 SXM on NVSwitch and 16 x 200 Gb/s
# RoCE (400 GB/s per node, as hgx-h100's 8 x 400 Gb/s NDR); BM.GPU4.8 has 8 A100-SXM4-40GB on NVSwitch
# and 16 x 100 Gb/s RoCE (200 GB/s per node, as hgx-a100's 8 x 200 Gb/s HDR).
# (gpus, gpus_per_node, bytes, latency_us, source, note)
# ---------------------------------------------------------------------------------------------
OCI_NCCL = [
    # tutorials/_hpc/benchmark/run-nccltests-h100.md at eaed073535c4f1717edd7798e73b6b141283ca6c:
    # 2 x BM.GPU.H100.8, NCCL 2.21.5 (TensorFlow NGC 24.06 container), all_reduce_perf -b 1G -e 16G -f 2.
    *[("h100", "hgx-h100", 16, 8, b, t, "oci-nccltests-h100", "2 nodes; NCCL 2.21.5")
      for b, t in ((1073741824, 4511.2), (2147483648, 8825.9), (4294967296, 17437.0),
                   (8589934592, 34719.0), (17179869184, 69338.0))],
    # content/hpc/benchmark/run-nccltests-ubuntu/index.md at 876e820b6fc53752d61e571181aac4b833e84a1a:
    # BM.GPU4.8, NCCL 2.26.5 (NVIDIA HPC SDK 25.7), all_reduce_perf -b 10G -e 10G.
    ("a100", "hgx-a100", 8, 8, 10737418240, 80922.0, "oci-nccltests-a100-ubuntu", "1 node; NCCL 2.26.5"),
    ("a100", "hgx-a100", 16, 8, 10737418240, 104989.0, "oci-nccltests-a100-ubuntu", "2 nodes; NCCL 2.26.5"),
    # tutorials/_hpc/benchmark/run-nccltests.md at b135fbdd955c06b4bc95cebaa812d565398e0b90: 2 x BM.GPU4.8,
    # NCCL from the TensorFlow NGC 24.06 container, all_reduce_perf -b 10G -e 10G -g 8 (one process per node).
    ("a100", "hgx-a100", 16, 8, 10737418240, 90330.0, "oci-nccltests-a100", "2 nodes; one process per node (-g 8)"),
]


def nccl_rows():
    return [row("all_reduce", gpu, us, dict(bytes=b, gpus=n, gpus_per_node=per_node, cluster=cluster), source,
                kernel="nccl_all_reduce", note=note)
            for gpu, cluster, n, per_node, b, us, source, note in OCI_NCCL]


def main():
    plain, grouped, expert_ffn = deepgemm_rows()
    fa3, fa_alt = attention_rows()
    files = {
        "public-h100.csv": plain + expert_ffn + fa3,
        "public-h100-grouped-gemm.csv": grouped,
        "public-h100-attention-alt.csv": fa_alt,
        "public-h800-deepep.csv": deepep_rows(),
        "public-h100-fused-moe.csv": vllm_fused_moe_rows(),
        "public-h100-cublas-fp16.csv": triton_issue_cublas_rows(),
        "public-nccl.csv": nccl_rows(),
    }
    for gpu, rows in mamf_rows().items():
        files[f"public-mamf-{gpu}.csv"] = rows
    for name, rows in files.items():
        n = table.write_table(os.path.join(OUT_DIR, name), rows, header=HEADER)
        print(f"{name}: {n} rows")
    n = table.write_table(os.path.join(OUT_DIR, "public-breakdown.csv"), breakdown_rows(), header=BREAKDOWN_HEADER)
    print(f"public-breakdown.csv: {n} rows")


if __name__ == "__main__":
    main()
