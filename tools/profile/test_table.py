# SPDX-License-Identifier: Apache-2.0
"""Tests of the torch-free half of the profiler: run with
    python3 -m unittest discover -s tools/profile -p 'test_*.py'
"""

import csv
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import table  # noqa: E402

SHAPES = {
    "expert_ffn": dict(tokens=64, experts=8, top_k=2, hidden=4096, intermediate=14336, dtype="bf16"),
    "dense_gemm": dict(m=128, n=7168, k=2048, dtype="fp8"),
    "attention_prefill": dict(batch=2, q_tokens=1024, kv_tokens=1024, heads=32, kv_heads=8, head_dim=128,
                              dtype="bf16"),
    "attention_decode": dict(batch=32, q_tokens=1, kv_tokens=2048, heads=32, kv_heads=8, head_dim=128,
                             dtype="bf16"),
    "all_to_all": dict(bytes=1 << 20, gpus=16, gpus_per_node=8),
    "all_reduce": dict(bytes=1 << 20, gpus=8, gpus_per_node=8),
    "send_recv": dict(bytes=4096, gpus=2, gpus_per_node=1),
}


class SchemaTest(unittest.TestCase):
    def test_header(self):
        self.assertEqual(table.HEADER[:2], ("gpu", "op"))
        for col in ("tokens", "experts", "top_k", "hidden", "intermediate", "dtype", "active_experts",
                    "m", "n", "k", "batch", "q_tokens", "kv_tokens", "heads", "kv_heads", "head_dim",
                    "bytes", "gpus", "gpus_per_node", "cluster", "latency_us", "gpu_id"):
            self.assertIn(col, table.CORE_COLUMNS)
        self.assertEqual(len(set(table.HEADER)), len(table.HEADER))
        self.assertFalse(set(table.EXTRA_COLUMNS) & set(table.CORE_COLUMNS))
        self.assertEqual(set(table.REQUIRED_SHAPE), set(table.OPS))

    def test_rows_carry_exactly_the_required_shape_columns(self):
        for op, shape in SHAPES.items():
            row = table.make_row(op, "h100", 12.5, shape)
            filled = {c for c in table.SHAPE_COLUMNS if row[c] != ""}
            self.assertEqual(filled, set(table.REQUIRED_SHAPE[op]), op)
            self.assertEqual(row["latency_us"], "12.5")
            self.assertEqual(row["op"], op)

    def test_optional_columns(self):
        row = table.make_row("expert_ffn", "h100", 1.0, dict(SHAPES["expert_ffn"], active_experts=8))
        self.assertEqual(row["active_experts"], "8")
        row = table.make_row("all_to_all", "h100", 1.0, dict(SHAPES["all_to_all"], cluster="ib-400g"))
        self.assertEqual(row["cluster"], "ib-400g")

    def test_rejects_bad_rows(self):
        with self.assertRaises(table.SchemaError):  # a column the op does not use
            table.make_row("dense_gemm", "h100", 1.0, dict(SHAPES["dense_gemm"], tokens=3))
        with self.assertRaises(table.SchemaError):  # a missing required column
            shape = dict(SHAPES["attention_decode"])
            del shape["kv_heads"]
            table.make_row("attention_decode", "h100", 1.0, shape)
        with self.assertRaises(table.SchemaError):
            table.make_row("dense_gemm", "h100", 0.0, SHAPES["dense_gemm"])
        with self.assertRaises(table.SchemaError):
            table.make_row("expert_ffn", "h100", 1.0, dict(SHAPES["expert_ffn"], top_k=9))
        with self.assertRaises(table.SchemaError):  # 2 tokens x top-2 can activate at most 4 experts
            table.make_row("expert_ffn", "h100", 1.0, dict(SHAPES["expert_ffn"], tokens=2, active_experts=5))
        with self.assertRaises(table.SchemaError):
            table.make_row("attention_prefill", "h100", 1.0, dict(SHAPES["attention_prefill"], kv_heads=5))
        with self.assertRaises(table.SchemaError):
            table.make_row("attention_decode", "h100", 1.0, dict(SHAPES["attention_decode"], kv_tokens=0))
        with self.assertRaises(table.SchemaError):
            table.make_row("all_reduce", "h100", 1.0, dict(SHAPES["all_reduce"], gpus=1))
        with self.assertRaises(table.SchemaError):
            table.make_row("dense_gemm", "h100", 1.0, dict(SHAPES["dense_gemm"], dtype="fp16"))
        with self.assertRaises(table.SchemaError):
            table.make_row("nope", "h100", 1.0, {})


class SweepTest(unittest.TestCase):
    def test_token_sweep(self):
        self.assertEqual(table.TOKEN_SWEEP[0], 1)
        self.assertEqual(table.TOKEN_SWEEP[-1], 8192)
        self.assertEqual(len(table.TOKEN_SWEEP), 22)  # 14 powers of two and 8 in between
        self.assertEqual(sum(1 for t in table.TOKEN_SWEEP if t & (t - 1) == 0), 14)

    def test_expert_sweeps_by_model(self):
        # Per local-expert count: 22 balanced rows, plus at 64 and 1024 tokens the powers of two
        # from top_k below the fully-activated count.
        # mixtral: 8 local -> 22 + 2x{2,4}; 2 local -> 22.            48
        # qwen3:   128 local -> 22 + 2x{8,16,32,64}; 16 -> 22 + 2x{8}. 54
        # deepseek: 32 local -> 22 + 2x{8,16}; 8 -> 22.               48
        expected = {"mixtral-8x7b": 48, "qwen3-30b-a3b": 54, "deepseek-v3": 48}
        for name, n in expected.items():
            plan = table.expert_plan(table.MODELS[name])
            self.assertEqual(len(plan), n, name)
            for p in plan:  # every planned shape is a valid row
                table.make_row("expert_ffn", "h100", 1.0, p.shape_dict())

    def test_expert_shapes(self):
        ds = table.MODELS["deepseek-v3"]
        self.assertEqual((ds.hidden, ds.moe_intermediate, ds.experts, ds.top_k), (7168, 2048, 256, 8))
        self.assertEqual(ds.local_experts, (32, 8))
        mx = table.MODELS["mixtral-8x7b"]
        self.assertEqual((mx.hidden, mx.moe_intermediate, mx.experts, mx.top_k), (4096, 14336, 8, 2))
        qw = table.MODELS["qwen3-30b-a3b"]
        self.assertEqual((qw.hidden, qw.moe_intermediate, qw.experts, qw.top_k), (2048, 768, 128, 8))
        first = table.expert_plan(mx)[0].shape_dict()
        self.assertEqual(first, dict(experts=8, top_k=2, hidden=4096, intermediate=14336, dtype="bf16",
                                     tokens=1, active_experts=2))

    def test_other_sweeps(self):
        for name, m in table.MODELS.items():
            self.assertEqual(len(table.gemm_plan(m)), 14 * len(m.projections), name)
            self.assertEqual(len(table.prefill_plan(m)), 14, name)  # 7 lengths x 2 batches
            # batch x kv_tokens <= 256k: 4+4+4+4 (kv<=2048) + 3+3 (4k, 8k) + 2+2 (16k, 32k)
            self.assertEqual(len(table.decode_plan(m)), 26, name)
        self.assertEqual(len(table.gemm_plan(table.MODELS["deepseek-v3"])), 84)
        self.assertEqual(len(table.COLLECTIVE_BYTES), 21)

    def test_build_plan_totals(self):
        all_models = list(table.MODELS)
        single = ["expert_ffn", "dense_gemm", "attention_prefill", "attention_decode"]
        self.assertEqual(len(table.build_plan(all_models, single)), 150 + 140 + 42 + 78)
        # Collectives only with 2+ GPUs.
        self.assertEqual(len(table.build_plan(all_models, ["all_reduce"], gpus=1)), 0)
        plan = table.build_plan(all_models, ["all_reduce", "send_recv"], gpus=16, gpus_per_node=8)
        self.assertEqual(len(plan), 42)
        self.assertEqual(plan[0].shape_dict(), dict(bytes=1024, gpus=16, gpus_per_node=8))
        quick = table.build_plan(["mixtral-8x7b"], ["expert_ffn"], quick=True)
        self.assertEqual(len(quick), 5 + 2 + 5)
        with self.assertRaises(KeyError):
            table.build_plan(["gpt-5"], single)


class CsvTest(unittest.TestCase):
    def test_round_trip(self):
        rows = [table.make_row(op, "h100", 10.0 + i, shape, extra={"note": "a, \"quoted\" note", "kernel": "x"},
                               gpu_id=i)
                for i, (op, shape) in enumerate(SHAPES.items())]
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.csv")
            self.assertEqual(table.write_table(path, rows), len(rows))
            with open(path, newline="") as f:
                reader = csv.reader(f)
                header = next(reader)
                body = list(reader)
            self.assertEqual(tuple(header), table.HEADER)
            self.assertEqual(len(body), len(rows))
            self.assertTrue(all(len(r) == len(header) for r in body))
            back = table.read_table(path)
            self.assertEqual(back, rows)
            self.assertEqual(back[1]["m"], "128")
            self.assertEqual(back[1]["tokens"], "")
            self.assertEqual(back[4]["bytes"], "1048576")
            self.assertEqual(back[0]["note"], "a, \"quoted\" note")

    def test_read_skips_comments(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "t.csv")
            with open(path, "w") as f:
                f.write("# provenance\n# more\ngpu,op,m,n,k,dtype,latency_us\nh100,dense_gemm,1,2,3,bf16,4.5\n")
            rows = table.read_table(path)
            self.assertEqual(rows, [dict(gpu="h100", op="dense_gemm", m="1", n="2", k="3", dtype="bf16",
                                         latency_us="4.5")])

    def test_latency_format(self):
        self.assertEqual(table.format_latency(412.5), "412.5")
        self.assertEqual(table.format_latency(3.0), "3")
        self.assertEqual(table.format_latency(1.23456789), "1.2346")


class HelperTest(unittest.TestCase):
    def test_gpu_label(self):
        self.assertEqual(table.gpu_label("NVIDIA H100 80GB HBM3"), ("h100", ""))
        self.assertEqual(table.gpu_label("NVIDIA H100 PCIe")[0], "h100")
        self.assertEqual(table.gpu_label("NVIDIA A100-SXM4-80GB"), ("a100", ""))
        self.assertEqual(table.gpu_label("NVIDIA H200"), ("h200", ""))
        label, note = table.gpu_label("NVIDIA H800")
        self.assertEqual(label, "h100")
        self.assertIn("H800", note)
        self.assertEqual(table.gpu_label("NVIDIA GeForce RTX 4090"), ("geforce-rtx-4090", ""))
        self.assertEqual(table.gpu_label("NVIDIA L40S"), ("l40s", ""))
        self.assertEqual(table.gpu_label("???"), ("gpu", ""))

    def test_median(self):
        self.assertEqual(table.median([5.0]), 5.0)
        self.assertEqual(table.median([3.0, 1.0, 2.0]), 2.0)
        self.assertEqual(table.median([4.0, 1.0, 3.0, 2.0]), 2.5)
        self.assertEqual(table.median([10.0, 10.0, 1000.0]), 10.0)  # an outlier does not move it
        self.assertAlmostEqual(table.median([0.1, 0.3, 0.2, 0.7, 0.5, 0.6]), 0.4)
        with self.assertRaises(ValueError):
            table.median([])


class CliTest(unittest.TestCase):
    def run_cli(self, *args):
        return subprocess.run([sys.executable, os.path.join(HERE, "profile_gpu.py"), *args],
                              capture_output=True, text=True, timeout=60)

    def test_help(self):
        r = self.run_cli("--help")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("--dry-run", r.stdout)

    def test_dry_run(self):
        r = self.run_cli("--dry-run")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("total: 410 rows", r.stdout)
        self.assertIn("expert_ffn", r.stdout)
        r = self.run_cli("--dry-run", "--quick", "--models", "deepseek-v3", "--ops", "expert_ffn,all_reduce")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("total: 17 rows", r.stdout)  # 12 expert rows + 5 all_reduce sizes

    def test_bad_option(self):
        r = self.run_cli("--dry-run", "--ops", "matmul")
        self.assertNotEqual(r.returncode, 0)


if __name__ == "__main__":
    unittest.main()
