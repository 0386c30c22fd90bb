#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times MoE-inference kernels and collectives on a CUDA GPU and writes epsim's measurement table.

Single GPU (expert FFN, dense GEMM, attention):
    python3 tools/profile/profile_gpu.py --out h100.csv
Collectives (all_reduce, all_to_all, send_recv) over NCCL, one process per GPU:
    torchrun --nproc_per_node 8 tools/profile/profile_gpu.py --ops all_reduce,all_to_all,send_recv --out nccl.csv
Plan only, no GPU or torch needed:
    python3 tools/profile/profile_gpu.py --dry-run

torch is imported only inside the timing functions; --help and --dry-run work without it.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Callable, Dict, List, Optional, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import table  # noqa: E402  (the torch-free half of this tool)

SINGLE_GPU_OPS = ("expert_ffn", "dense_gemm", "attention_prefill", "attention_decode")


# --------------------------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------------------------

def time_cuda(fn: Callable[[], object], reps: int, warmup: int) -> float:
    """Median over reps of fn's GPU time in microseconds, from CUDA events, after warm-up calls."""
    import torch

    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for i in range(reps):
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    return table.median([s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)])


def torch_dtype(name: str):
    import torch

    return {"bf16": torch.bfloat16, "fp8": torch.float8_e4m3fn}[name]


# --------------------------------------------------------------------------------------------
# Expert FFN (grouped SwiGLU experts)
# --------------------------------------------------------------------------------------------

def routing(tokens: int, top_k: int, active: int, device):
    """Deterministic routing: token i goes to experts (i*top_k + j) mod active, j < top_k.

    With top_k <= active these are top_k distinct experts, and the assignments spread evenly over
    the first `active` experts, so exactly min(active, tokens*top_k) experts receive tokens.
    """
    import torch

    i = torch.arange(tokens, device=device).unsqueeze(1)
    j = torch.arange(top_k, device=device).unsqueeze(0)
    ids = (i * top_k + j) % active
    weights = torch.full((tokens, top_k), 1.0 / top_k, device=device, dtype=torch.float32)
    return ids.to(torch.int32), weights


class TorchExperts:
    """Portable grouped expert FFN: gather tokens per expert, gate/up GEMM, SiLU*up, down GEMM, scatter.

    mode "bmm": pad every active expert's tokens to the largest group and run one batched GEMM per
    projection (good for balanced routing); mode "loop": one GEMM pair per active expert.
    """

    def __init__(self, w13, w2, mode: str):
        self.w13, self.w2, self.mode = w13, w2, mode  # w13 [E, 2I, H], w2 [E, H, I]

    def __call__(self, x, ids, weights):
        import torch
        import torch.nn.functional as F

        tokens, top_k = ids.shape
        flat = ids.reshape(-1).long()
        order = torch.argsort(flat, stable=True)
        expert_of = flat[order]
        token_of = order // top_k
        counts = torch.bincount(flat, minlength=self.w13.shape[0])
        out = torch.zeros_like(x)
        xs = x.index_select(0, token_of)
        inter = self.w2.shape[2]
        if self.mode == "loop":
            ys = torch.empty_like(xs)
            start = 0
            for e, c in enumerate(counts.tolist()):
                if c == 0:
                    continue
                h = xs[start:start + c] @ self.w13[e].t()
                ys[start:start + c] = (F.silu(h[:, :inter]) * h[:, inter:]) @ self.w2[e].t()
                start += c
        else:
            active = torch.nonzero(counts).flatten()
            cap = int(counts.max().item())
            # Position of each sorted assignment within its expert's group.
            group_start = torch.cumsum(counts, 0) - counts
            pos = torch.arange(flat.numel(), device=x.device) - group_start[expert_of]
            slot = torch.full((counts.numel(),), -1, dtype=torch.long, device=x.device)
            slot[active] = torch.arange(active.numel(), device=x.device)
            padded = x.new_zeros((active.numel(), cap, x.shape[1]))
            padded[slot[expert_of], pos] = xs
            h = torch.bmm(padded, self.w13[active].transpose(1, 2))
            y = torch.bmm(F.silu(h[..., :inter]) * h[..., inter:], self.w2[active].transpose(1, 2))
            ys = y[slot[expert_of], pos]
        w = weights.reshape(-1)[order].to(x.dtype).unsqueeze(1)
        out.index_add_(0, token_of, ys * w)
        return out


def vllm_experts():
    """vLLM's fused MoE entry point if vllm is importable, else None."""
    try:
        from vllm.model_executor.layers.fused_moe import fused_experts  # type: ignore
    except Exception:  # noqa: BLE001 - any import problem means "not available"
        return None
    return fused_experts


def measure_expert_ffn(p: table.Planned, args, device) -> Dict[str, object]:
    import torch

    s = p.shape_dict()
    dt = torch_dtype("bf16")
    e, k, hdim, inter = int(s["experts"]), int(s["top_k"]), int(s["hidden"]), int(s["intermediate"])
    tokens, active = int(s["tokens"]), int(s["active_experts"])
    gen = torch.Generator(device=device).manual_seed(0)
    w13 = torch.randn((e, 2 * inter, hdim), device=device, dtype=dt, generator=gen) * 0.02
    w2 = torch.randn((e, hdim, inter), device=device, dtype=dt, generator=gen) * 0.02
    x = torch.randn((tokens, hdim), device=device, dtype=dt, generator=gen)
    ids, weights = routing(tokens, k, active, device)
    impl = args.moe_impl
    fused = vllm_experts() if impl in ("auto", "vllm") else None
    if impl == "vllm" and fused is None:
        raise RuntimeError("--moe-impl vllm but vllm is not importable")
    if fused is not None:
        kernel = "vllm_fused_moe"
        fn = lambda: fused(x, w13, w2, weights, ids, inplace=False)  # noqa: E731
    else:
        mode = "loop" if impl == "loop" else "bmm"
        kernel = f"torch_{mode}"
        experts = TorchExperts(w13, w2, mode)
        fn = lambda: experts(x, ids, weights)  # noqa: E731
    us = time_cuda(fn, args.reps, args.warmup)
    return {"latency_us": us, "kernel": kernel}


# --------------------------------------------------------------------------------------------
# Dense GEMM
# --------------------------------------------------------------------------------------------

def measure_dense_gemm(p: table.Planned, args, device) -> Dict[str, object]:
    import torch

    s = p.shape_dict()
    m, n, k = int(s["m"]), int(s["n"]), int(s["k"])
    a = torch.randn((m, k), device=device, dtype=torch.bfloat16)
    b = torch.randn((n, k), device=device, dtype=torch.bfloat16)
    if s["dtype"] == "fp8":
        a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        one = torch.ones((), device=device, dtype=torch.float32)
        fn = lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)  # noqa: E731
        kernel = "torch_scaled_mm"
    else:
        fn = lambda: a @ b.t()  # noqa: E731
        kernel = "torch_matmul"
    return {"latency_us": time_cuda(fn, args.reps, args.warmup), "kernel": kernel}


# --------------------------------------------------------------------------------------------
# Attention
# --------------------------------------------------------------------------------------------

def flash_attn_func():
    try:
        from flash_attn import flash_attn_func as f  # type: ignore
    except Exception:  # noqa: BLE001
        return None
    return f


def measure_attention(p: table.Planned, args, device) -> Dict[str, object]:
    import torch
    import torch.nn.functional as F

    s = p.shape_dict()
    causal = bool(p.info_dict().get("causal", False))
    b, sq, skv = int(s["batch"]), int(s["q_tokens"]), int(s["kv_tokens"])
    h, hkv, d = int(s["heads"]), int(s["kv_heads"]), int(s["head_dim"])
    dt = torch.bfloat16
    fa = flash_attn_func() if args.attn_impl in ("auto", "flash") else None
    if args.attn_impl == "flash" and fa is None:
        raise RuntimeError("--attn-impl flash but flash_attn is not importable")
    if fa is not None and d <= 256:
        q = torch.randn((b, sq, h, d), device=device, dtype=dt)
        kk = torch.randn((b, skv, hkv, d), device=device, dtype=dt)
        v = torch.randn((b, skv, hkv, d), device=device, dtype=dt)
        fn = lambda: fa(q, kk, v, causal=causal)  # noqa: E731
        kernel = "flash_attn"
    else:
        q = torch.randn((b, h, sq, d), device=device, dtype=dt)
        kk = torch.randn((b, hkv, skv, d), device=device, dtype=dt)
        v = torch.randn((b, hkv, skv, d), device=device, dtype=dt)
        if hkv != h:
            try:
                F.scaled_dot_product_attention(q[:1, :, :1], kk[:1, :, :1], v[:1, :, :1], enable_gqa=True)
                gqa = True
            except TypeError:  # torch before 2.5: expand the kv heads instead
                gqa = False
            if not gqa:
                kk = kk.repeat_interleave(h // hkv, dim=1)
                v = v.repeat_interleave(h // hkv, dim=1)
        else:
            gqa = False
        extra = {"enable_gqa": True} if gqa else {}
        # With q shorter than kv (decode), is_causal would align the mask to the top-left; decode
        # attends to every cached key, so no mask.
        fn = lambda: F.scaled_dot_product_attention(q, kk, v, is_causal=causal and sq == skv, **extra)  # noqa: E731
        kernel = "torch_sdpa"
    return {"latency_us": time_cuda(fn, args.reps, args.warmup), "kernel": kernel, "causal": causal}


# --------------------------------------------------------------------------------------------
# Collectives (torchrun, one process per GPU)
# --------------------------------------------------------------------------------------------

def measure_collective(p: table.Planned, args, device) -> Dict[str, object]:
    """Median time of the collective on each rank, then the slowest rank's median (all ranks agree)."""
    import torch
    import torch.distributed as dist

    s = p.shape_dict()
    nbytes, world = int(s["bytes"]), dist.get_world_size()
    rank = dist.get_rank()
    elems = max(1, nbytes // 2)  # bf16 elements
    if p.op == "all_reduce":
        buf = torch.ones(elems, device=device, dtype=torch.bfloat16)
        fn = lambda: dist.all_reduce(buf)  # noqa: E731
    elif p.op == "all_to_all":
        elems = max(world, elems - elems % world)  # nccl-tests size = the whole send buffer per GPU
        src = torch.ones(elems, device=device, dtype=torch.bfloat16)
        dst = torch.empty_like(src)
        fn = lambda: dist.all_to_all_single(dst, src)  # noqa: E731
    else:  # send_recv: every rank sends to the next and receives from the previous (a ring)
        src = torch.ones(elems, device=device, dtype=torch.bfloat16)
        dst = torch.empty_like(src)
        nxt, prv = (rank + 1) % world, (rank - 1) % world

        def fn():
            ops = [dist.P2POp(dist.isend, src, nxt), dist.P2POp(dist.irecv, dst, prv)]
            for r in dist.batch_isend_irecv(ops):
                r.wait()

    us = time_cuda(fn, args.reps, args.warmup)
    t = torch.tensor([us], device=device, dtype=torch.float64)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return {"latency_us": float(t.item()), "kernel": "nccl"}


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------

def environment_columns(device) -> Dict[str, object]:
    import torch

    name = torch.cuda.get_device_name(device)
    label, note = table.gpu_label(name)
    return {"gpu": label, "note": note, "device_name": name, "torch_version": torch.__version__,
            "cuda_version": torch.version.cuda or ""}


def parse_args(argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        description="Time expert FFNs, dense GEMMs, attention and NCCL collectives; write epsim's "
                    "measurement table (feed it to `epsim calibrate fit`).")
    ap.add_argument("--models", default=",".join(table.MODELS),
                    help="comma-separated models whose shapes to sweep (default: all): " + ", ".join(table.MODELS))
    ap.add_argument("--ops", default=",".join(SINGLE_GPU_OPS),
                    help="comma-separated ops (default: the single-GPU ones); collectives need torchrun: "
                         + ", ".join(table.OPS))
    ap.add_argument("--out", default="table.csv", help="CSV to write (rank 0 writes under torchrun)")
    ap.add_argument("--reps", type=int, default=50, help="timed repetitions per shape; the median is kept")
    ap.add_argument("--warmup", type=int, default=10, help="untimed calls before timing")
    ap.add_argument("--dtype", choices=table.DTYPES, default="bf16",
                    help="dtype of dense GEMMs (fp8 via torch._scaled_mm); expert FFN and attention run bf16")
    ap.add_argument("--quick", action="store_true", help="a few shapes per sweep only")
    ap.add_argument("--dry-run", action="store_true", help="print the planned rows and exit (no GPU, no torch)")
    ap.add_argument("--device", type=int, default=None, help="CUDA device index (default: LOCAL_RANK or 0)")
    ap.add_argument("--moe-impl", choices=("auto", "vllm", "bmm", "loop"), default="auto",
                    help="expert FFN implementation: vllm's fused_moe when importable (auto), or torch")
    ap.add_argument("--attn-impl", choices=("auto", "flash", "sdpa"), default="auto",
                    help="attention implementation: flash_attn when importable (auto), or torch SDPA")
    ap.add_argument("--cluster", default="", help="optional cluster label written on collective rows")
    ap.add_argument("--gpus-per-node", type=int, default=None,
                    help="GPUs per node for collective rows (default: LOCAL_WORLD_SIZE)")
    args = ap.parse_args(argv)
    args.models = [m for m in args.models.split(",") if m]
    args.ops = [o for o in args.ops.split(",") if o]
    for m in args.models:
        if m not in table.MODELS:
            ap.error(f"unknown model {m!r}; known: {', '.join(table.MODELS)}")
    for o in args.ops:
        if o not in table.OPS:
            ap.error(f"unknown op {o!r}; known: {', '.join(table.OPS)}")
    if args.reps < 1 or args.warmup < 0:
        ap.error("--reps must be >= 1 and --warmup >= 0")
    return args


def world_from_env() -> Dict[str, int]:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local_world = int(os.environ.get("LOCAL_WORLD_SIZE", str(world)))
    return {"world": world, "local_world": local_world, "rank": int(os.environ.get("RANK", "0")),
            "local_rank": int(os.environ.get("LOCAL_RANK", "0"))}


def dry_run(args) -> int:
    env = world_from_env()
    collectives = [o for o in args.ops if o in table.COLLECTIVE_OPS]
    gpus = env["world"] if env["world"] >= 2 else (8 if collectives else 1)
    gpn = args.gpus_per_node or (env["local_world"] if env["world"] >= 2 else gpus)
    plan = table.build_plan(args.models, args.ops, args.dtype, args.quick, gpus, gpn, args.cluster)
    counts = table.count_by_op(plan)
    print(f"models: {', '.join(args.models)}; ops: {', '.join(args.ops)}; dtype {args.dtype}"
          f"{'; quick' if args.quick else ''}")
    if collectives and env["world"] < 2:
        print(f"(collectives shown for {gpus} GPUs; they are measured only under torchrun with >= 2 processes)")
    for op in table.OPS:
        if op in counts:
            print(f"  {op:18s} {counts[op]:5d} rows")
    for name in args.models:
        m = table.MODELS[name]
        per = table.count_by_op(p for p in plan if p.model == name)
        detail = ", ".join(f"{op} {n}" for op, n in per.items())
        print(f"  {name}: experts {m.experts} top-{m.top_k}, local experts {list(m.local_experts)}; {detail}")
    print(f"total: {len(plan)} rows -> {args.out}")
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parse_args(argv)
    if args.dry_run:
        return dry_run(args)

    import torch

    if not torch.cuda.is_available():
        print("error: no CUDA device (use --dry-run to see the plan without one)", file=sys.stderr)
        return 2
    env = world_from_env()
    distributed = env["world"] >= 2
    index = args.device if args.device is not None else env["local_rank"]
    torch.cuda.set_device(index)
    device = torch.device("cuda", index)
    collectives = [o for o in args.ops if o in table.COLLECTIVE_OPS]
    if collectives and not distributed:
        print("note: collectives need torchrun with >= 2 processes; skipping " + ", ".join(collectives),
              file=sys.stderr)
    if distributed:
        import torch.distributed as dist

        try:
            dist.init_process_group("nccl", device_id=device)
        except TypeError:  # torch without the device_id argument
            dist.init_process_group("nccl")
    gpn = args.gpus_per_node or env["local_world"]
    plan = table.build_plan(args.models, args.ops, args.dtype, args.quick,
                            env["world"] if distributed else 1, gpn, args.cluster)
    if distributed:  # each rank times the collectives; single-GPU ops only on rank 0's device
        plan = [p for p in plan if p.op in table.COLLECTIVE_OPS or env["rank"] == 0]
    base = environment_columns(device)
    physical = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    ids = [x for x in physical.split(",") if x.strip()]
    gpu_id = int(ids[index]) if index < len(ids) and ids[index].strip().isdigit() else index

    measurers = {"expert_ffn": measure_expert_ffn, "dense_gemm": measure_dense_gemm,
                 "attention_prefill": measure_attention, "attention_decode": measure_attention,
                 "all_reduce": measure_collective, "all_to_all": measure_collective,
                 "send_recv": measure_collective}
    rows: List[Dict[str, str]] = []
    barrier_done = not distributed
    for i, p in enumerate(plan):
        if not barrier_done and p.op in table.COLLECTIVE_OPS:
            import torch.distributed as dist

            dist.barrier()  # the other ranks wait here while rank 0 times the single-GPU ops
            barrier_done = True
        try:
            got = measurers[p.op](p, args, device)
        except torch.cuda.OutOfMemoryError:
            print(f"skip (out of memory): {p.op} {p.shape_dict()}", file=sys.stderr)
            torch.cuda.empty_cache()
            continue
        notes = [n for n in (base["note"], table.MODELS[p.model].attention_note
                             if p.model and p.op in table.ATTENTION_OPS else "") if n]
        info = p.info_dict()
        if "projection" in info:
            notes.append(f"projection {info['projection']}")
        if "routing" in info:
            notes.append(f"routing {info['routing']}")
        extra = {"kernel": got.get("kernel", ""), "causal": got.get("causal", ""), "reps": args.reps,
                 "model": p.model, "device_name": base["device_name"], "torch_version": base["torch_version"],
                 "cuda_version": base["cuda_version"], "note": "; ".join(notes)}
        if extra["causal"] != "":
            extra["causal"] = "1" if extra["causal"] else "0"
        single = p.op not in table.COLLECTIVE_OPS
        rows.append(table.make_row(p.op, str(base["gpu"]), float(got["latency_us"]), p.shape_dict(), extra,
                                   gpu_id=gpu_id if single else None))
        if env["rank"] == 0:
            print(f"[{i + 1}/{len(plan)}] {p.op} {p.shape_dict()} {float(got['latency_us']):.2f} us",
                  file=sys.stderr)
    if distributed:
        import torch.distributed as dist

        dist.barrier()
        dist.destroy_process_group()
    if env["rank"] == 0:
        n = table.write_table(args.out, rows)
        print(f"wrote {n} rows to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
