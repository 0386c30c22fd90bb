# SPDX-License-Identifier: Apache-2.0
"""SGLang expert-distribution recorder dumps -> what `epsim trace import` and `epsim place` read.

SGLang (python/sglang/srt/eplb/expert_distribution.py; docs/engines.md names the commit) saves with
torch.save one dict per dump:
  stat / stat_approx: {"rank", "logical_count": int [passes][hidden layers][logical experts] (summed over
                       ranks, zero rows for dense layers and unfilled buffer slots), ...}; rank 0 writes it.
  per_pass:           {"records": [{"forward_pass_id", "rank", "global_physical_count": [hidden layers][slots]}],
                       "last_physical_to_logical_map": [hidden layers][slots]}; one file per rank.
  per_token:          records also hold "topk_ids_of_layer": [hidden layers][tokens][8] physical slot ids,
                       -1 for dense layers and padding.
This module is the torch-free half: it takes the dicts with tensors already turned into nested lists.
"""

import json


def as_list(x):
    """A tensor (or anything with .tolist()) as nested lists; lists pass through."""
    return x.tolist() if hasattr(x, "tolist") else x


def mode_of(dump):
    if "logical_count" in dump:
        return "stat"
    records = dump.get("records")
    if records is None:
        raise ValueError("not an SGLang recorder dump: expected 'logical_count' or 'records'")
    if any("topk_ids_of_layer" in r for r in records):
        return "per_token"
    return "per_pass"


def moe_rows(rows_by_layer_nonempty, first_dense=None, hidden_layers=None):
    """The hidden-layer ids kept as MoE layers: all after `first_dense` when given, else those that hold any
    routing (dense layers never do)."""
    if first_dense is not None:
        return list(range(first_dense, hidden_layers))
    kept = [l for l, nonempty in enumerate(rows_by_layer_nonempty) if nonempty]
    if not kept:
        raise ValueError("no layer holds any routing")
    return kept


def stat_history(dump, first_dense=None):
    """stat mode: one load-history entry per recorded pass (unfilled buffer slots, all zero, left out)."""
    count = as_list(dump["logical_count"])
    if count and count[0] and not isinstance(count[0][0], list):
        count = [count]  # a single [layers][experts] matrix
    layers = len(count[0])
    nonempty = [any(any(v != 0 for v in entry[l]) for entry in count) for l in range(layers)]
    keep = moe_rows(nonempty, first_dense, layers)
    return [{"logical_expert_load": [entry[l] for l in keep]} for entry in count
            if any(v != 0 for row in entry for v in row)], keep


def _logical(slot_to_expert, layer, slot):
    return slot_to_expert[layer][slot]


def per_pass_history(dumps, first_dense=None):
    """per_pass mode: each forward pass's physical counts, summed over the ranks' files, as logical loads."""
    passes = {}
    p2l = None
    for dump in dumps:
        p2l = as_list(dump["last_physical_to_logical_map"])
        for r in dump["records"]:
            counts = as_list(r["global_physical_count"])
            acc = passes.setdefault(r["forward_pass_id"], [[0] * len(row) for row in counts])
            for l, row in enumerate(counts):
                for s, c in enumerate(row):
                    acc[l][s] += c
    if not passes:
        raise ValueError("the dumps hold no records")
    experts = max(max(row) for row in p2l) + 1
    entries = []
    for pid in sorted(passes):
        phys = passes[pid]
        logical = [[0] * experts for _ in phys]
        for l, row in enumerate(phys):
            for s, c in enumerate(row):
                logical[l][_logical(p2l, l, s)] += c
        entries.append(logical)
    layers = len(entries[0])
    nonempty = [any(any(v != 0 for v in e[l]) for e in entries) for l in range(layers)]
    keep = moe_rows(nonempty, first_dense, layers)
    return [{"logical_expert_load": [e[l] for l in keep]} for e in entries], keep


def per_token_lines(dumps, top_k, first_dense=None):
    """per_token mode: one JSON line per (rank, forward pass), {"routed_experts": [tokens][MoE layers][top_k]}
    of logical ids; padding tokens (all -1) left out."""
    records = []
    p2l = None
    for dump in dumps:
        p2l = as_list(dump["last_physical_to_logical_map"])
        for r in dump["records"]:
            records.append((r["forward_pass_id"], r["rank"], as_list(r["topk_ids_of_layer"])))
    if not records:
        raise ValueError("the dumps hold no records")
    records.sort(key=lambda x: (x[0], x[1]))
    layers = len(records[0][2])
    nonempty = [any(any(i >= 0 for tok in rec[2][l] for i in tok) for rec in records) for l in range(layers)]
    keep = moe_rows(nonempty, first_dense, layers)
    lines = []
    for _, _, ids in records:
        tokens = []
        for t in range(len(ids[keep[0]])):
            per_layer = [ids[l][t][:top_k] for l in keep]
            if all(i < 0 for row in per_layer for i in row):
                continue  # padding
            if any(i < 0 for row in per_layer for i in row):
                raise ValueError(f"token {t} of pass has -1 ids on some MoE layers only")
            tokens.append([[_logical(p2l, l, i) for i in row] for l, row in zip(keep, per_layer)])
        if tokens:
            lines.append(json.dumps({"routed_experts": tokens}, separators=(",", ":")))
    return lines, keep
