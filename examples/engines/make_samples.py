#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Writes the small engine recordings docs/engines.md walks through, for DeepSeek-V2-Lite (27 hidden layers,
the first dense; 26 MoE layers of 64 routed experts, top-6), with skewed expert popularity (Zipf 1.1 over a
per-layer random order). Standard library only; seeded, so the files are reproducible:
    python3 examples/engines/make_samples.py examples/engines
  vllm-routed.jsonl   vLLM --enable-return-routed-experts responses (prompt_routed_experts, choices[0].
                      routed_experts; MoE layers only; a prefix-cached prompt start as -1 rows)
  trtllm-stats/       TensorRT-LLM EXPERT_STATISTIC_PATH: meta_info.json, rank0/rank1.safetensors ("{iter}_{layer}",
                      hidden-layer ids 1..26), iterations 100..107
  load-history.json   {"load_history": [{"logical_expert_load": [26][64]}, ...]}, 12 entries
"""

import json
import os
import random
import struct
import sys

HIDDEN, FIRST_DENSE, EXPERTS, K = 27, 1, 64, 6
MOE = HIDDEN - FIRST_DENSE
rng = random.Random(2026)
weights = []
for _ in range(MOE):
    order = list(range(EXPERTS))
    rng.shuffle(order)
    w = [0.0] * EXPERTS
    for rank, e in enumerate(order):
        w[e] = 1.0 / (rank + 1) ** 1.1
    weights.append(w)


def token():
    """One token's top-6 per MoE layer: weighted draws without replacement."""
    out = []
    for layer in range(MOE):
        w = list(weights[layer])
        chosen = []
        for _ in range(K):
            e = rng.choices(range(EXPERTS), weights=w)[0]
            chosen.append(e)
            w[e] = 0.0
        out.append(chosen)
    return out


def counts(tokens):
    c = [[0] * EXPERTS for _ in range(MOE)]
    for t in tokens:
        for layer, ids in enumerate(t):
            for e in ids:
                c[layer][e] += 1
    return c


def safetensors(tensors):
    header, data = {}, b""
    for name, values in tensors:
        begin = len(data)
        data += struct.pack(f"<{len(values)}i", *values)
        header[name] = {"dtype": "I32", "shape": [len(values)], "data_offsets": [begin, len(data)]}
    h = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(h)) + h + data


def main(out):
    os.makedirs(os.path.join(out, "trtllm-stats"), exist_ok=True)
    with open(os.path.join(out, "vllm-routed.jsonl"), "w") as f:
        for r in range(8):
            prompt = [token() for _ in range(12)]
            cached = 4 if r % 2 else 0  # a shared prompt prefix served from the prefix cache
            prompt_ids = [[[-1] * K for _ in range(MOE)] for _ in range(cached)] + prompt[cached:]
            line = {"id": f"cmpl-{r}", "object": "text_completion", "prompt_routed_experts": prompt_ids,
                    "choices": [{"index": 0, "text": "...", "routed_experts": [token() for _ in range(4)]}]}
            f.write(json.dumps(line, separators=(",", ":")) + "\n")
    with open(os.path.join(out, "trtllm-stats", "meta_info.json"), "w") as f:
        json.dump({"num_experts": EXPERTS, "num_experts_per_token": K}, f)
        f.write("\n")
    ranks = [[], []]
    for it in range(100, 108):
        for rank in range(2):
            c = counts([token() for _ in range(16)])
            for layer in range(MOE):
                ranks[rank].append((f"{it}_{layer + FIRST_DENSE}", c[layer]))
    for rank in range(2):
        with open(os.path.join(out, "trtllm-stats", f"rank{rank}.safetensors"), "wb") as f:
            f.write(safetensors(ranks[rank]))
    history = [{"logical_expert_load": counts([token() for _ in range(24)])} for _ in range(12)]
    with open(os.path.join(out, "load-history.json"), "w") as f:
        json.dump({"load_history": history}, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
