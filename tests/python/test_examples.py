# SPDX-License-Identifier: Apache-2.0
"""examples/monte_carlo.py runs (on a tiny study) and prints what the study's own tables say."""
import csv
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(os.environ["EPSIM_SOURCE_DIR"])
STUDY = ROOT / "tests" / "data" / "python" / "montecarlo-tiny.toml"


class MonteCarloExampleTest(unittest.TestCase):
    def test_runs_and_prints_the_study_figures(self):
        tmp = Path(tempfile.mkdtemp(prefix="epsim-example-"))
        try:
            p = subprocess.run([sys.executable, str(ROOT / "examples" / "monte_carlo.py"), "--study", str(STUDY),
                                "--out", str(tmp), "--jobs", "2"], capture_output=True, text=True, cwd=tmp)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("4 runs: 2 placements x 2 cluster draws", p.stdout)
            # Its means are the runs' own: recomputed here from runs.csv.
            rows = list(csv.DictReader(io.StringIO((tmp / "study" / "runs.csv").read_text())))
            for policy in ("linear", "eplb"):
                values = [float(r["ttft_ms.p90"]) for r in rows if r["policy"] == policy]
                line = next(l for l in p.stdout.splitlines() if l.startswith(f"{policy:<10}"))
                self.assertEqual(float(line.split()[1]), float(f"{sum(values) / len(values):.4g}"))
            self.assertIn("eplb     ttft_ms.p90", p.stdout)
            try:
                import matplotlib  # noqa: F401
            except ImportError:
                self.assertIn("matplotlib is not installed", p.stdout)
            else:
                png = tmp / "monte_carlo.png"
                self.assertTrue(png.is_file())
                self.assertEqual(png.read_bytes()[:8], b"\x89PNG\r\n\x1a\n")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
