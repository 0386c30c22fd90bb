# SPDX-License-Identifier: Apache-2.0
"""The Python package against the epsim binary: the same files, numbers and messages (docs/python.md).

Run by CTest (tests/CMakeLists.txt) with PYTHONPATH at the build's python/ folder and EPSIM_BINARY,
EPSIM_SOURCE_DIR set. The binary gives the expected outputs; the module itself never starts it.
"""
import csv
import io
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings
from pathlib import Path

import numpy as np

import epsim
from epsim import _epsim, _tables

BINARY = os.environ["EPSIM_BINARY"]
ROOT = Path(os.environ["EPSIM_SOURCE_DIR"])
DEMO = "examples/demo.toml"
SMALL = "tests/data/small.toml"
STUDY = "tests/data/python/montecarlo-tiny.toml"


def cli(*args, check=True):
    """The binary, from the repository root: (exit code, stdout, stderr)."""
    p = subprocess.run([BINARY, *map(str, args)], cwd=ROOT, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"epsim {' '.join(map(str, args))}: {p.stderr}")
    return p.returncode, p.stdout, p.stderr


def csv_rows(text):
    return list(csv.reader(io.StringIO(text)))


def cell_value(cell):
    """A CSV cell as the CLI wrote it: an int, a float (empty: NaN) or text."""
    if cell == "":
        return math.nan
    for kind in (int, float):
        try:
            return kind(cell)
        except ValueError:
            pass
    return cell


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def table_equals_csv(test, table, text):
    """Every cell of `table` is the CLI's CSV cell, value for value (exactly: no tolerance)."""
    rows = csv_rows(text)
    header, body = rows[0], rows[1:]
    test.assertEqual(_tables.columns(table), header)
    test.assertEqual(len(table), len(body))
    for j, name in enumerate(header):
        column = table[name]
        values = column.tolist() if hasattr(column, "tolist") else list(column)
        for i, row in enumerate(body):
            expected = cell_value(row[j])
            got = values[i]
            if isinstance(expected, (int, float)) and not isinstance(got, str):
                got = float(got) if isinstance(expected, float) else int(got)
            test.assertTrue(same(got, expected), f"{name} row {i}: {got!r} != {expected!r}")


class Workdir(unittest.TestCase):
    def setUp(self):
        self.cwd = os.getcwd()
        os.chdir(ROOT)  # relative config paths resolve like the CLI's, from the repository root
        self.tmp = Path(tempfile.mkdtemp(prefix="epsim-py-test-"))

    def tearDown(self):
        os.chdir(self.cwd)
        shutil.rmtree(self.tmp, ignore_errors=True)


class RunCase(Workdir):
    def check_run_equals_cli(self, config, cli_args, **run_args):
        out = self.tmp / "cli"
        cli("run", config, "--out", out, *cli_args)
        r = epsim.run(config, **run_args)
        names = sorted(p.name for p in out.iterdir())
        self.assertEqual(sorted(r.files), names)
        for name in names:
            self.assertEqual(r.files[name].encode("utf-8"), (out / name).read_bytes(), name)
        self.assertEqual(r.summary, json.loads((out / "summary.json").read_text()))
        table_equals_csv(self, r.requests, (out / "requests.csv").read_text())
        return r, out


class RunTest(RunCase):
    def test_second_config_with_steps_and_seed_equals_the_cli(self):
        r, _ = self.check_run_equals_cli(SMALL, ["--set", "output.steps_csv=true", "--seed", "9"],
                                         steps=True, seed=9)
        self.assertIsNotNone(r.steps)
        table_equals_csv(self, r.steps, r.files["steps.csv"])
        self.assertEqual(r.summary["seed"], 9)

    def test_overrides_equal_the_clis_set(self):
        r, _ = self.check_run_equals_cli(SMALL, ["--set", "workload.rate_rps=8.0", "--set", "policy.placement=eplb"],
                                         overrides={"workload.rate_rps": 8.0, "policy.placement": "eplb"})
        self.assertEqual(r.summary["config"]["workload"]["rate_rps"], 8.0)
        self.assertEqual(r.summary["resolved"]["placement"], "eplb")
        base = epsim.run(SMALL)
        self.assertNotEqual(base.files["requests.csv"], r.files["requests.csv"])
        # A Config with overrides is the same run.
        cfg = epsim.Config.load(SMALL).with_overrides({"workload.rate_rps": 8.0}).with_overrides(
            {"policy.placement": "eplb"})
        self.assertEqual(cfg.overrides, ["workload.rate_rps=8.0", 'policy.placement="eplb"'])
        self.assertEqual(epsim.run(cfg).files, r.files)

    def test_config_text_and_embedded_demo(self):
        text = (ROOT / SMALL).read_text()
        a = epsim.run(epsim.Config.from_toml(text, source=SMALL))
        self.assertEqual(a.files, epsim.run(SMALL).files)
        self.assertEqual(epsim.run(text).summary["config_source"], "<string>")
        # No config: the embedded demo, as `epsim run` without a CONFIG.
        out = self.tmp / "demo"
        cli("run", "--out", out, "--set", "workload.num_requests=60")
        self.assertEqual(epsim.run(overrides={"workload.num_requests": 60}).files["summary.json"].encode(),
                         (out / "summary.json").read_bytes())

    def test_bad_key_and_bad_value_raise_the_clis_message(self):
        for key_value in ("scheduler.bogus=1", "workload.rate_rps=-3", "workload.rate_rps=\"fast\""):
            rc, _, err = cli("run", SMALL, "--set", key_value, "--out", self.tmp / "x", check=False)
            self.assertEqual(rc, 2)
            line = err.strip().splitlines()[-1]
            key, value = key_value.split("=", 1)
            with self.assertRaises(epsim.ConfigError) as caught:
                epsim.Config.load(SMALL, {key: json.loads(value)})
            self.assertEqual("config error: " + str(caught.exception), line)
            self.assertIsInstance(caught.exception, ValueError)
            with self.assertRaises(epsim.ConfigError):
                epsim.run(SMALL, overrides={key: json.loads(value)})
        # A file with a bad key: the message names the file and the key, as the CLI's does.
        bad = self.tmp / "bad.toml"
        bad.write_text((ROOT / SMALL).read_text() + "\n[scheduler2]\nx = 1\n")
        _, _, err = cli("run", bad, "--out", self.tmp / "y", check=False)
        with self.assertRaises(epsim.ConfigError) as caught:
            epsim.run(bad)
        self.assertEqual("config error: " + str(caught.exception), err.strip().splitlines()[-1])
        self.assertIn(str(bad), str(caught.exception))

    def test_validate_equals_the_cli(self):
        _, out, _ = cli("validate", SMALL)
        self.assertEqual(epsim.Config.load(SMALL).validate(), out.strip())
        self.assertEqual(epsim.Config.load(SMALL).to_dict(), epsim.run(SMALL).summary["config"])

    def test_seed_is_checked_as_the_clis(self):
        for seed in (-1, 2**63):
            with self.assertRaises(ValueError) as caught:
                epsim.run(SMALL, seed=seed)
            self.assertIn("expected a whole number in [0, 9223372036854775807]", str(caught.exception))

    def test_results_directory_round_trip(self):
        memory = epsim.run(SMALL, steps=True)
        out = self.tmp / "run"
        disk = epsim.run(SMALL, out=out, steps=True)
        self.assertEqual(disk.dir, out)
        self.assertEqual(sorted(p.name for p in out.iterdir()), sorted(memory.files))
        back = epsim.load_results(out)
        self.assertEqual(back.files, memory.files)
        self.assertEqual(back.summary, memory.summary)
        for name in ("requests", "steps"):
            a, b = back.tables[name], memory.tables[name]
            self.assertTrue(a.equals(b) if epsim.have_pandas() else np.array_equal(a, b, equal_nan=True), name)
        # The CLI's directory reads back into the same Result as run() in memory.
        cli_out = self.tmp / "cli"
        cli("run", SMALL, "--out", cli_out)
        self.assertEqual(epsim.load_results(cli_out).files, epsim.run(SMALL).files)
        # Python keeps its own SIGINT handler (KeyboardInterrupt) after epsim has written files.
        self.assertIs(signal.getsignal(signal.SIGINT), signal.default_int_handler)

    def test_gil_released_while_simulating(self):
        # Long enough (> 0.2 s) for the counting thread to show whether the GIL is free: ~0.5 s here.
        cfg = epsim.Config.load(SMALL, {"workload.num_requests": 16000, "workload.rate_rps": 40.0})
        counts = [0]
        stop = threading.Event()

        def count():
            while not stop.is_set():
                counts[0] += 1

        def rate(call):
            """How fast the other thread counts while `call` runs: (counts per second, seconds)."""
            before, t0 = counts[0], time.perf_counter()
            call()
            seconds = time.perf_counter() - t0
            return (counts[0] - before) / seconds, seconds

        t = threading.Thread(target=count)
        t.start()
        try:
            free, _ = rate(lambda: time.sleep(0.2))  # the main thread idle, the GIL free
            # The control: a C call that keeps the GIL (the regex engine backtracking 2^23 ways) lets the
            # counter run only until the switch interval (5 ms) hands the GIL over.
            held, held_s = rate(lambda: re.match(r"(a*)*b", "a" * 23))
            run, run_s = rate(lambda: _epsim.run(cfg._handle, None, None, False))  # C++ only, no Python
        finally:
            stop.set()
            t.join()
        self.assertGreater(held_s, 0.1)
        self.assertLess(held, free / 10, "the measure must tell a held GIL")
        self.assertGreater(run_s, 0.2)
        self.assertGreater(run, free / 10, f"counted {run:.3g}/s while simulating, {free:.3g}/s idle")

    def test_ctrl_c_ends_a_run_as_keyboard_interrupt(self):
        # 100,000 requests: minutes of simulating, cut after 0.3 s; nothing is left behind.
        cfg = epsim.Config.load(DEMO, {"workload.num_requests": 100000, "workload.rate_rps": 200.0})
        out = self.tmp / "interrupted"
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        t0 = time.perf_counter()
        timer.start()
        with self.assertRaises(KeyboardInterrupt):
            epsim.run(cfg, out=out)
        timer.join()
        self.assertLess(time.perf_counter() - t0, 3.0)
        self.assertEqual(list(self.tmp.iterdir()), [])

    def test_runs_on_threads_equal_runs_one_by_one(self):
        seeds = [1, 2, 3]
        alone = [epsim.run(SMALL, seed=s).files for s in seeds]
        together = [None] * len(seeds)

        def go(i):
            together[i] = epsim.run(SMALL, seed=seeds[i]).files

        threads = [threading.Thread(target=go, args=(i,)) for i in range(len(seeds))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(together, alone)
        self.assertNotEqual(alone[0], alone[1])


class DemoTest(RunCase):
    """The demo, the run of the README's one-liner (about a second each way)."""

    def test_demo_equals_the_cli_byte_for_byte(self):
        r, _ = self.check_run_equals_cli(DEMO, [])
        # summary["ttft_ms"] is the metrics object's: the figures the CLI prints in its TTFT row.
        self.assertIs(r.summary["ttft_ms"], r.summary["metrics"]["ttft_ms"])
        self.assertIn("ttft_ms", r.summary)
        self.assertNotIn("ttft_ms", dict(r.summary))
        ttft_row = next(l for l in r.text.splitlines() if l.startswith("TTFT"))
        self.assertEqual(ttft_row.split()[1:], [f"{r.summary['ttft_ms'][k]:.2f}" for k in ("mean", "p50", "p90", "p99")])
        self.assertIsNone(r.steps)
        self.assertEqual(len(r.requests), 600)


class TablesWithoutPandasTest(Workdir):
    def test_structured_arrays_hold_the_same_values(self):
        r = epsim.run(SMALL, steps=True)
        saved = _tables._pandas
        _tables._pandas = None
        try:
            for name in ("requests", "steps"):
                arr = _tables.read_table(r.files[name + ".csv"])
                self.assertIsInstance(arr, np.ndarray)
                table_equals_csv(self, arr, r.files[name + ".csv"])
        finally:
            _tables._pandas = saved

    def test_epsim_no_pandas_in_a_fresh_interpreter(self):
        code = ("import epsim, numpy; r = epsim.run('tests/data/small.toml');"
                "assert not epsim.have_pandas(); assert isinstance(r.requests, numpy.ndarray);"
                "assert 'pandas' not in __import__('sys').modules; print(r.requests['ttft_ms'][0])")
        env = dict(os.environ, EPSIM_NO_PANDAS="1")
        p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        first = csv_rows(epsim.run(SMALL).files["requests.csv"])[1]
        self.assertEqual(float(p.stdout), float(first[8]))  # ttft_ms


class CommandsTest(Workdir):
    def test_sweep_jobs_1_and_2_equal_each_other_and_the_cli(self):
        one = epsim.sweep(STUDY, jobs=1)
        two = epsim.sweep(STUDY, jobs=2, out=self.tmp / "two")
        cli("sweep", STUDY, "--out", self.tmp / "cli", "-j", "2", "--progress", "none")
        for name in ("runs.csv", "points.csv", "distribution.csv"):
            self.assertEqual(one.files[name], two.files[name], name)
            self.assertEqual(one.files[name].encode(), (self.tmp / "cli" / name).read_bytes(), name)
        table_equals_csv(self, one.runs, one.files["runs.csv"])
        self.assertIsNone(one.dir)
        self.assertEqual(two.dir, self.tmp / "two")
        self.assertIsNone(one.ranking)
        self.assertEqual(len(one.runs), 4)
        self.assertIn("montecarlo study, 2 points x 2 replications", one.text)
        back = epsim.load_results(self.tmp / "two")
        self.assertEqual(back.files["runs.csv"], two.files["runs.csv"])

    def test_a_rebalance_sweep_has_its_tables(self):
        study = self.tmp / "rebalance.toml"
        study.write_text("[study]\nkind = \"rebalance\"\nbase = \"" + str(Path(ROOT) / SMALL) + "\"\n"
                         "replications = 2\n[study.rebalance]\ninterval_steps = [20, 80]\n")
        r = epsim.sweep(study)
        self.assertEqual(len(r.rebalance), 3)  # off and the two intervals
        self.assertEqual(list(r.break_even["migration"]), ["stop_the_world"])
        self.assertIsNone(r.scaling)
        self.assertIn("break-even interval (throughput against rebalancing off):", r.text)

    def test_sweep_errors_are_the_clis(self):
        bad = self.tmp / "bad.toml"
        bad.write_text("[study]\nkind = \"grid\"\nreplications = 0\n")
        _, _, err = cli("sweep", bad, "--out", self.tmp / "o", check=False)
        with self.assertRaises(epsim.ConfigError) as caught:
            epsim.sweep(bad)
        self.assertEqual("config error: " + str(caught.exception), err.strip().splitlines()[-1])

    def test_place_equals_the_cli(self):
        load = self.tmp / "load.csv"
        load.write_text("layer,expert,tokens\n" + "".join(
            f"{l},{e},{(e * 37 + l * 11) % 50 + 1}\n" for l in range(2) for e in range(8)))
        for fmt in ("epsim", "vllm"):
            out = self.tmp / f"cli-{fmt}"
            cli("place", "--policy", "eplb", "--gpus", "2", "--slots", "10", "--load", load, "--format", fmt,
                "--out", out)
            p = epsim.place(load, policy="eplb", gpus=2, slots=10, format=fmt)
            self.assertEqual(p.text.encode(), out.read_bytes())
            self.assertEqual(p.data, json.loads(out.read_text()))
        with self.assertRaises(epsim.UsageError) as caught:
            epsim.place(load, policy="eplb")
        _, _, err = cli("place", "--policy", "eplb", "--load", load, check=False)
        self.assertEqual(f"epsim place: {caught.exception}", err.strip().splitlines()[-1])

    def test_cost_equals_the_cli(self):
        _, text, _ = cli("cost", "--gpu", "h100", "--model", "mixtral-8x7b", "--tokens", "1,64,4096", "--csv")
        table = epsim.cost("h100", "mixtral-8x7b", tokens=[1, 64, 4096])
        table_equals_csv(self, table, text)
        _, text, _ = cli("cost", "--csv", "--config", SMALL, "--set", "cluster.speed_factors=[1.0,0.5,1.0,1.0]",
                         "--gpu-index", "1")
        table = epsim.cost(config=SMALL, overrides={"cluster.speed_factors": [1.0, 0.5, 1.0, 1.0]}, gpu_index=1)
        table_equals_csv(self, table, text)
        _, text, _ = cli("cost", "--csv", "--collective", "all_reduce", "--cluster", "hgx-h100", "--bytes", "1M,16M")
        table_equals_csv(self, epsim.cost(collective="all_reduce", cluster="hgx-h100", bytes=["1M", "16M"]), text)


if __name__ == "__main__":
    unittest.main()
