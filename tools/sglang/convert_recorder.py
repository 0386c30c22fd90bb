#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Converts SGLang expert-distribution recorder dumps (.pt, torch.save) into what epsim reads:
  stat, stat_approx, per_pass -> an EPLB load history JSON  {"load_history": [{"logical_expert_load": ...}]}
  per_token                   -> vLLM-style routed-experts JSON Lines {"routed_experts": [tokens][layers][k]}
Then: epsim trace import OUT trace.bin --model M   or   epsim place --load OUT --model M ...

usage: convert_recorder.py DUMP.pt [DUMP_rank1.pt ...] --out FILE [--top-k K] [--first-dense N]
Needs PyTorch to unpickle the dumps (torch.load(weights_only=True)); the conversion itself is recorder.py.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import recorder  # noqa: E402


def load(path):
    try:
        import torch
    except ImportError:
        sys.exit("convert_recorder.py: PyTorch is needed to read torch.save files (pip install torch, or "
                 "Debian's python3-torch)")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except TypeError:  # PyTorch before 1.13 has no weights_only
        return torch.load(path, map_location="cpu")


def write_atomically(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dumps", nargs="+", help="expert_distribution_recorder_*.pt (per_pass/per_token: every rank's)")
    ap.add_argument("--out", required=True, help="load history .json, or .jsonl for per_token dumps")
    ap.add_argument("--top-k", type=int, default=8, help="per_token: experts per token (SGLang records 8 columns)")
    ap.add_argument("--first-dense", type=int, default=None,
                    help="leading dense layers to drop (default: drop the layers that hold no routing)")
    args = ap.parse_args(argv)
    dumps = [load(p) for p in args.dumps]
    try:
        modes = {recorder.mode_of(d) for d in dumps}
    except (ValueError, AttributeError, TypeError) as e:
        sys.exit(f"convert_recorder.py: {', '.join(args.dumps)}: {e}")
    if len(modes) != 1:
        sys.exit(f"convert_recorder.py: the dumps mix recorder modes {sorted(modes)}")
    mode = modes.pop()
    try:
        return convert(mode, dumps, args)
    except (ValueError, KeyError, IndexError) as e:
        sys.exit(f"convert_recorder.py: {', '.join(args.dumps)}: {mode} dump: {e!r}")


def convert(mode, dumps, args):
    if mode == "stat":
        if len(dumps) != 1:
            sys.exit("convert_recorder.py: a stat dump is already summed over ranks: give one file")
        entries, keep = recorder.stat_history(dumps[0], args.first_dense)
    elif mode == "per_pass":
        entries, keep = recorder.per_pass_history(dumps, args.first_dense)
    else:
        lines, keep = recorder.per_token_lines(dumps, args.top_k, args.first_dense)
        write_atomically(args.out, "\n".join(lines) + "\n")
        print(f"{mode}: {len(lines)} passes, MoE layers = hidden layers {keep[0]}..{keep[-1]} ({len(keep)}) "
              f"-> {args.out}")
        return 0
    write_atomically(args.out, json.dumps({"load_history": entries}, separators=(",", ":")) + "\n")
    print(f"{mode}: {len(entries)} entries, MoE layers = hidden layers {keep[0]}..{keep[-1]} ({len(keep)}) "
          f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
