# SPDX-License-Identifier: Apache-2.0
"""The measurement table epsim calibrates from: schema, row builders, shape sweeps, CSV I/O.

Nothing here imports torch, so the planning, the dry run and the tests work on a machine
without a GPU. profile_gpu.py imports torch lazily, only inside its timing functions.

Schema (one row per measured kernel or collective; an empty cell means "not applicable"):
    gpu, op, <the op's shape columns>, latency_us, gpu_id, then free extra columns.
epsim reads the core columns and ignores the extras (kernel, device_name, versions, note...).
"""

from __future__ import annotations

import csv
import math
import re
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

# --------------------------------------------------------------------------------------------
# Schema
# --------------------------------------------------------------------------------------------

OPS: Tuple[str, ...] = (
    "expert_ffn",
    "dense_gemm",
    "attention_prefill",
    "attention_decode",
    "all_to_all",
    "all_reduce",
    "send_recv",
)

COLLECTIVE_OPS: Tuple[str, ...] = ("all_to_all", "all_reduce", "send_recv")
ATTENTION_OPS: Tuple[str, ...] = ("attention_prefill", "attention_decode")

_ATTENTION_COLS = ("batch", "q_tokens", "kv_tokens", "heads", "kv_heads", "head_dim", "dtype")
_COLLECTIVE_COLS = ("bytes", "gpus", "gpus_per_node")

# The shape columns each op must fill, and nothing else among the shape columns ...
REQUIRED_SHAPE: Dict[str, Tuple[str, ...]] = {
    "expert_ffn": ("tokens", "experts", "top_k", "hidden", "intermediate", "dtype"),
    "dense_gemm": ("m", "n", "k", "dtype"),
    "attention_prefill": _ATTENTION_COLS,
    "attention_decode": _ATTENTION_COLS,
    "all_to_all": _COLLECTIVE_COLS,
    "all_reduce": _COLLECTIVE_COLS,
    "send_recv": _COLLECTIVE_COLS,
}

# ... except these, which an op may leave empty.
OPTIONAL_SHAPE: Dict[str, Tuple[str, ...]] = {
    "expert_ffn": ("active_experts",),
    "dense_gemm": (),
    "attention_prefill": (),
    "attention_decode": (),
    "all_to_all": ("cluster",),
    "all_reduce": ("cluster",),
    "send_recv": ("cluster",),
}

# Every shape column, in the order the header lists them.
SHAPE_COLUMNS: Tuple[str, ...] = (
    "tokens", "experts", "top_k", "active_experts", "hidden", "intermediate",
    "m", "n", "k",
    "batch", "q_tokens", "kv_tokens", "heads", "kv_heads", "head_dim",
    "dtype",
    "bytes", "gpus", "gpus_per_node", "cluster",
)

CORE_COLUMNS: Tuple[str, ...] = ("gpu", "op") + SHAPE_COLUMNS + ("latency_us", "gpu_id")

# Extra columns this tool writes (epsim ignores them).
EXTRA_COLUMNS: Tuple[str, ...] = (
    "kernel", "causal", "reps", "model", "device_name", "torch_version", "cuda_version", "note",
)

HEADER: Tuple[str, ...] = CORE_COLUMNS + EXTRA_COLUMNS

DTYPES: Tuple[str, ...] = ("bf16", "fp8")

_INT_COLUMNS = frozenset(c for c in SHAPE_COLUMNS if c not in ("dtype", "cluster", "bytes"))


class SchemaError(ValueError):
    """A row that does not fit the table's schema."""


def make_row(op: str, gpu: str, latency_us: float, shape: Mapping[str, object],
             extra: Optional[Mapping[str, object]] = None, gpu_id: Optional[int] = None) -> Dict[str, str]:
    """One table row: checks the op's shape columns are all there (and no others), returns str cells."""
    if op not in REQUIRED_SHAPE:
        raise SchemaError(f"unknown op {op!r}; valid ops: {', '.join(OPS)}")
    if not gpu:
        raise SchemaError("gpu label is empty")
    if not (isinstance(latency_us, (int, float)) and math.isfinite(latency_us) and latency_us > 0):
        raise SchemaError(f"latency_us must be a positive number, got {latency_us!r}")
    required = REQUIRED_SHAPE[op]
    allowed = set(required) | set(OPTIONAL_SHAPE[op])
    for col in shape:
        if col not in SHAPE_COLUMNS:
            raise SchemaError(f"{col!r} is not a shape column")
        if col not in allowed and shape[col] not in (None, ""):
            raise SchemaError(f"op {op} does not use column {col!r}")
    missing = [c for c in required if shape.get(c) in (None, "")]
    if missing:
        raise SchemaError(f"op {op} needs {', '.join(missing)}")
    row = {c: "" for c in HEADER}
    row["gpu"] = gpu
    row["op"] = op
    for col in allowed:
        v = shape.get(col)
        if v in (None, ""):
            continue
        if col == "dtype":
            if v not in DTYPES:
                raise SchemaError(f"dtype must be one of {DTYPES}, got {v!r}")
            row[col] = str(v)
        elif col == "cluster":
            row[col] = str(v)
        elif col == "bytes":
            b = float(v)  # type: ignore[arg-type]
            if not b > 0:
                raise SchemaError(f"bytes must be positive, got {v!r}")
            row[col] = str(int(b)) if b == int(b) else repr(b)
        else:
            iv = int(v)  # type: ignore[arg-type]
            if iv != v or iv <= 0:
                raise SchemaError(f"{col} must be a positive whole number, got {v!r}")
            row[col] = str(iv)
    _check_consistency(op, row)
    row["latency_us"] = format_latency(latency_us)
    if gpu_id is not None:
        row["gpu_id"] = str(int(gpu_id))
    for col, v in (extra or {}).items():
        if col in CORE_COLUMNS:
            raise SchemaError(f"extra column {col!r} clashes with a core column")
        if col not in row:
            raise SchemaError(f"extra column {col!r} is not in this tool's header")
        row[col] = "" if v is None else str(v)
    return row


def _check_consistency(op: str, row: Mapping[str, str]) -> None:
    """The cross-column rules epsim's reader also checks."""
    if op == "expert_ffn":
        experts, top_k, tokens = int(row["experts"]), int(row["top_k"]), int(row["tokens"])
        if top_k > experts:
            raise SchemaError(f"top_k {top_k} exceeds the {experts} local experts")
        if row["active_experts"]:
            active = int(row["active_experts"])
            if active > min(experts, tokens * top_k):
                raise SchemaError(f"active_experts {active} exceeds min(experts, tokens*top_k)")
    elif op in ATTENTION_OPS:
        if int(row["kv_tokens"]) < int(row["q_tokens"]):
            raise SchemaError("kv_tokens must include the new q_tokens")
        if int(row["heads"]) % int(row["kv_heads"]):
            raise SchemaError("heads must be a multiple of kv_heads")
    elif op in COLLECTIVE_OPS:
        if int(row["gpus"]) < 2:
            raise SchemaError("a collective needs at least 2 GPUs")


def format_latency(us: float) -> str:
    """Microseconds with 4 significant decimals at most, no exponent for ordinary values."""
    s = f"{us:.4f}".rstrip("0").rstrip(".")
    return s if s else "0"


# --------------------------------------------------------------------------------------------
# Helpers shared with the profiler
# --------------------------------------------------------------------------------------------

def median(values: Sequence[float]) -> float:
    """Median of the timings (mean of the two middle ones for an even count)."""
    if not values:
        raise ValueError("median of no timings")
    s = sorted(values)
    n = len(s)
    mid = n // 2
    return s[mid] if n % 2 else (s[mid - 1] + s[mid]) / 2.0


_GPU_LABELS = (
    # (substring of the device name, label, note); the first match wins.
    ("H800", "h100", "H800: H100 SXM compute and HBM, reduced NVLink"),
    ("H200", "h200", ""),
    ("H100", "h100", ""),
    ("A100", "a100", ""),
)


def gpu_label(device_name: str) -> Tuple[str, str]:
    """The table's gpu label (and a note) for a CUDA device name such as 'NVIDIA H100 80GB HBM3'."""
    upper = device_name.upper()
    for key, label, note in _GPU_LABELS:
        if key in upper:
            return label, note
    s = device_name.lower()
    for prefix in ("nvidia ", "amd "):
        if s.startswith(prefix):
            s = s[len(prefix):]
    s = re.sub(r"[^a-z0-9]+", "-", s).strip("-")
    return (s or "gpu"), ""


# --------------------------------------------------------------------------------------------
# Models and sweeps
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelShapes:
    name: str
    hidden: int
    moe_intermediate: int
    experts: int
    top_k: int
    local_experts: Tuple[int, ...]          # expert counts on one GPU to profile (EP degrees)
    heads: int
    kv_heads: int
    head_dim: int
    projections: Tuple[Tuple[str, int, int], ...]  # (name, n, k) of the dense GEMMs y[m,n] = x[m,k] W
    attention_note: str = ""


MODELS: Dict[str, ModelShapes] = {
    "mixtral-8x7b": ModelShapes(
        name="mixtral-8x7b", hidden=4096, moe_intermediate=14336, experts=8, top_k=2,
        local_experts=(8, 2), heads=32, kv_heads=8, head_dim=128,
        projections=(("qkv_proj", 6144, 4096), ("o_proj", 4096, 4096)),
    ),
    "qwen3-30b-a3b": ModelShapes(
        name="qwen3-30b-a3b", hidden=2048, moe_intermediate=768, experts=128, top_k=8,
        local_experts=(128, 16), heads=32, kv_heads=4, head_dim=128,
        projections=(("qkv_proj", 5120, 2048), ("o_proj", 2048, 4096)),
    ),
    "deepseek-v3": ModelShapes(
        name="deepseek-v3", hidden=7168, moe_intermediate=2048, experts=256, top_k=8,
        local_experts=(32, 8), heads=128, kv_heads=128, head_dim=128,
        projections=(
            ("q_a+kv_a_proj", 2112, 7168),
            ("q_b_proj", 24576, 1536),
            ("kv_b_proj", 32768, 512),
            ("o_proj", 7168, 16384),
            ("shared_gate_up", 4096, 7168),
            ("shared_down", 7168, 2048),
        ),
        attention_note="MLA approximated as MHA with 128 heads of dim 128",
    ),
}

# Tokens entering the MoE layer: powers of two 1..8192 and a few in between.
TOKEN_SWEEP: Tuple[int, ...] = (
    1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768,
    1024, 1536, 2048, 3072, 4096, 6144, 8192,
)
QUICK_TOKEN_SWEEP: Tuple[int, ...] = (1, 16, 128, 1024, 8192)

# Token counts at which the number of activated experts is swept (routing skewed to fewer experts).
ACTIVE_SWEEP_TOKENS: Tuple[int, ...] = (64, 1024)
QUICK_ACTIVE_SWEEP_TOKENS: Tuple[int, ...] = (1024,)

GEMM_M_SWEEP: Tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
QUICK_GEMM_M_SWEEP: Tuple[int, ...] = (1, 64, 1024, 8192)

PREFILL_SEQ: Tuple[int, ...] = (128, 256, 512, 1024, 2048, 4096, 8192)
PREFILL_BATCH: Tuple[int, ...] = (1, 4)
QUICK_PREFILL_SEQ: Tuple[int, ...] = (512, 4096)
QUICK_PREFILL_BATCH: Tuple[int, ...] = (1,)

DECODE_KV: Tuple[int, ...] = (128, 512, 1024, 2048, 4096, 8192, 16384, 32768)
DECODE_BATCH: Tuple[int, ...] = (1, 8, 32, 128)
DECODE_MAX_CACHED_TOKENS = 262144  # batch x kv_tokens cap, keeps the KV cache within a GPU's memory
QUICK_DECODE_KV: Tuple[int, ...] = (1024, 8192)
QUICK_DECODE_BATCH: Tuple[int, ...] = (1, 32)

COLLECTIVE_BYTES: Tuple[int, ...] = tuple(1 << e for e in range(10, 31))  # 1 KiB .. 1 GiB
QUICK_COLLECTIVE_BYTES: Tuple[int, ...] = (1 << 10, 1 << 16, 1 << 20, 1 << 24, 1 << 28)


@dataclass(frozen=True)
class Planned:
    """One measurement to take: the op, its shape columns and what the timing code needs."""
    op: str
    model: str
    shape: Tuple[Tuple[str, object], ...]
    info: Tuple[Tuple[str, object], ...] = field(default=())

    def shape_dict(self) -> Dict[str, object]:
        return dict(self.shape)

    def info_dict(self) -> Dict[str, object]:
        return dict(self.info)


def _powers_of_two_between(lo: int, hi: int) -> List[int]:
    out, p = [], 1
    while p <= hi:
        if p >= lo:
            out.append(p)
        p *= 2
    return out


def expert_plan(m: ModelShapes, dtype: str = "bf16", quick: bool = False) -> List[Planned]:
    """Balanced routing over the token sweep, then fewer activated experts at a few token counts."""
    plan: List[Planned] = []
    tokens_sweep = QUICK_TOKEN_SWEEP if quick else TOKEN_SWEEP
    active_tokens = QUICK_ACTIVE_SWEEP_TOKENS if quick else ACTIVE_SWEEP_TOKENS
    for local in m.local_experts:
        top_k = min(m.top_k, local)
        base = dict(experts=local, top_k=top_k, hidden=m.hidden, intermediate=m.moe_intermediate, dtype=dtype)
        for t in tokens_sweep:
            active = min(local, t * top_k)
            shape = dict(base, tokens=t, active_experts=active)
            plan.append(Planned("expert_ffn", m.name, tuple(shape.items()), (("routing", "balanced"),)))
        for t in active_tokens:
            full = min(local, t * top_k)
            for active in _powers_of_two_between(top_k, local):
                if active >= full:
                    continue
                shape = dict(base, tokens=t, active_experts=active)
                plan.append(Planned("expert_ffn", m.name, tuple(shape.items()), (("routing", "skewed"),)))
    return plan


def gemm_plan(m: ModelShapes, dtype: str = "bf16", quick: bool = False) -> List[Planned]:
    plan: List[Planned] = []
    for name, n, k in m.projections:
        for mm in (QUICK_GEMM_M_SWEEP if quick else GEMM_M_SWEEP):
            shape = dict(m=mm, n=n, k=k, dtype=dtype)
            plan.append(Planned("dense_gemm", m.name, tuple(shape.items()), (("projection", name),)))
    return plan


def prefill_plan(m: ModelShapes, quick: bool = False) -> List[Planned]:
    plan: List[Planned] = []
    for b in (QUICK_PREFILL_BATCH if quick else PREFILL_BATCH):
        for s in (QUICK_PREFILL_SEQ if quick else PREFILL_SEQ):
            shape = dict(batch=b, q_tokens=s, kv_tokens=s, heads=m.heads, kv_heads=m.kv_heads,
                         head_dim=m.head_dim, dtype="bf16")
            plan.append(Planned("attention_prefill", m.name, tuple(shape.items()), (("causal", True),)))
    return plan


def decode_plan(m: ModelShapes, quick: bool = False) -> List[Planned]:
    plan: List[Planned] = []
    for kv in (QUICK_DECODE_KV if quick else DECODE_KV):
        for b in (QUICK_DECODE_BATCH if quick else DECODE_BATCH):
            if b * kv > DECODE_MAX_CACHED_TOKENS:
                continue
            shape = dict(batch=b, q_tokens=1, kv_tokens=kv, heads=m.heads, kv_heads=m.kv_heads,
                         head_dim=m.head_dim, dtype="bf16")
            plan.append(Planned("attention_decode", m.name, tuple(shape.items()), (("causal", False),)))
    return plan


def collective_plan(ops: Iterable[str], gpus: int, gpus_per_node: int, quick: bool = False,
                    cluster: str = "") -> List[Planned]:
    plan: List[Planned] = []
    for op in ops:
        if op not in COLLECTIVE_OPS:
            continue
        for b in (QUICK_COLLECTIVE_BYTES if quick else COLLECTIVE_BYTES):
            shape: Dict[str, object] = dict(bytes=b, gpus=gpus, gpus_per_node=gpus_per_node)
            if cluster:
                shape["cluster"] = cluster
            plan.append(Planned(op, "", tuple(shape.items())))
    return plan


def build_plan(models: Sequence[str], ops: Sequence[str], dtype: str = "bf16", quick: bool = False,
               gpus: int = 1, gpus_per_node: int = 1, cluster: str = "") -> List[Planned]:
    """Everything one run measures. Collectives are planned only when gpus >= 2."""
    for name in models:
        if name not in MODELS:
            raise KeyError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    for op in ops:
        if op not in OPS:
            raise KeyError(f"unknown op {op!r}; known: {', '.join(OPS)}")
    plan: List[Planned] = []
    for name in models:
        m = MODELS[name]
        if "expert_ffn" in ops:
            plan += expert_plan(m, dtype, quick)
        if "dense_gemm" in ops:
            plan += gemm_plan(m, dtype, quick)
        if "attention_prefill" in ops:
            plan += prefill_plan(m, quick)
        if "attention_decode" in ops:
            plan += decode_plan(m, quick)
    if gpus >= 2:
        plan += collective_plan([o for o in ops if o in COLLECTIVE_OPS], gpus, gpus_per_node, quick, cluster)
    return plan


def count_by_op(plan: Iterable[Planned]) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for p in plan:
        counts[p.op] = counts.get(p.op, 0) + 1
    return counts


# --------------------------------------------------------------------------------------------
# CSV
# --------------------------------------------------------------------------------------------

def write_table(path: str, rows: Iterable[Mapping[str, str]], header: Sequence[str] = HEADER) -> int:
    """Writes the header and the rows (missing cells empty); returns the number of rows written."""
    n = 0
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(header), extrasaction="raise", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: r.get(c, "") for c in header})
            n += 1
    return n


def read_table(path: str) -> List[Dict[str, str]]:
    """Reads a table back, skipping '#' comment lines before the header."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = [ln for ln in f]
    start = 0
    while start < len(lines) and lines[start].lstrip().startswith("#"):
        start += 1
    return list(csv.DictReader(lines[start:]))
