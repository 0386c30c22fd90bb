# SPDX-License-Identifier: Apache-2.0
"""End to end: SGLang recorder dumps written with torch.save in SGLang's layout (stat and per_token, DeepSeek-V2-Lite
shapes: 27 hidden layers, the first dense, 64 experts, top-6) -> tools/sglang/convert_recorder.py -> epsim trace
import and epsim place --format sglang. Exit 77 (skipped) where PyTorch is not installed.
    python3 sglang_recorder_test.py EPSIM REPO_ROOT
"""

import json
import os
import random
import subprocess
import sys
import tempfile

try:
    import torch
except ImportError:
    print("PyTorch is not installed: skipped")
    sys.exit(77)

epsim, root = sys.argv[1], sys.argv[2]
convert = os.path.join(root, "tools", "sglang", "convert_recorder.py")
LAYERS, EXPERTS, K, SLOTS = 27, 64, 6, 72
rng = random.Random(5)


def run(*args):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAILED: {' '.join(args)}\n{r.stdout}{r.stderr}")
    return r.stdout


with tempfile.TemporaryDirectory() as tmp:
    # stat: 5 recorded passes of 40 tokens in a buffer of 8 (3 slots never filled, all zero).
    count = torch.zeros((8, LAYERS, EXPERTS), dtype=torch.int32)
    for p in range(5):
        for layer in range(1, LAYERS):
            for _ in range(40):
                for e in rng.sample(range(EXPERTS), K):
                    count[p, layer, e] += 1
    stat = os.path.join(tmp, "expert_distribution_recorder_1700000000.0.pt")
    torch.save({"rank": 0, "logical_count": count, "average_utilization_rate_over_window": None}, stat)
    hist = os.path.join(tmp, "history.json")
    run(sys.executable, convert, stat, "--out", hist)
    with open(hist) as f:
        entries = json.load(f)["load_history"]
    assert len(entries) == 5 and len(entries[0]["logical_expert_load"]) == LAYERS - 1, "stat conversion"
    out = run(epsim, "trace", "import", hist, os.path.join(tmp, "stat.trace"), "--model", "deepseek-v2-lite")
    assert "imported 5 steps (200 tokens) of 26 MoE layers x 64 experts, top-6" in out, out
    placed = os.path.join(tmp, "sglang.json")
    run(epsim, "place", "--policy", "eplb", "--load", hist, "--model", "deepseek-v2-lite", "--gpus", "8", "--slots",
        str(SLOTS), "--format", "sglang", "--out", placed)
    with open(placed) as f:
        rows = json.load(f)["physical_to_logical_map"]
    assert len(rows) == LAYERS and all(len(r) == SLOTS for r in rows), "sglang map shape"
    assert all(sorted(set(r)) == list(range(EXPERTS)) for r in rows), "every expert in every row"

    # per_token, two ranks: physical slot ids (slots 64..71 replicate experts 0..7), padding rows of -1.
    p2l = torch.tensor([list(range(EXPERTS)) + list(range(SLOTS - EXPERTS)) for _ in range(LAYERS)])
    files = []
    tokens = 0
    for rank in range(2):
        records = []
        for pass_id in range(3):
            ids = torch.full((LAYERS, 12, 8), -1, dtype=torch.int32)
            for t in range(10):  # 2 padding tokens per pass
                for layer in range(1, LAYERS):
                    experts = rng.sample(range(EXPERTS), K)
                    slots = [e + EXPERTS if e < SLOTS - EXPERTS and rng.random() < 0.5 else e for e in experts]
                    ids[layer, t, :K] = torch.tensor(slots)
                tokens += 1
            records.append({"forward_pass_id": pass_id, "rank": rank, "input_ids": [], "positions": [],
                            "extend_seq_lens": None, "forward_mode": 1, "misc_objects": [],
                            "global_physical_count": torch.zeros((LAYERS, SLOTS), dtype=torch.int32),
                            "topk_ids_of_layer": ids})
        path = os.path.join(tmp, f"expert_distribution_recorder_1700000000.0_{rank}.pt")
        torch.save({"records": records, "last_physical_to_logical_map": p2l}, path)
        files.append(path)
    jsonl = os.path.join(tmp, "routed.jsonl")
    run(sys.executable, convert, *files, "--out", jsonl, "--top-k", str(K))
    co = os.path.join(tmp, "co.csv")
    out = run(epsim, "trace", "import", jsonl, os.path.join(tmp, "tok.trace"), "--model", "deepseek-v2-lite",
              "--coactivation-out", co)
    assert f"imported 6 steps ({tokens} tokens) of 26 MoE layers x 64 experts, top-6" in out, out
    with open(co) as f:
        pairs = sum(int(float(line.split(",")[3])) for line in f.readlines()[1:])
    assert pairs == tokens * 26 * K * (K - 1) // 2, "each token adds k(k-1)/2 pairs per MoE layer"
print("ok")
