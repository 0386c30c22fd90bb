# SPDX-License-Identifier: Apache-2.0
"""dvfs_fit.py's model against closed forms (no GPU)."""
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dvfs_fit as f  # noqa: E402


class DvfsFitTest(unittest.TestCase):
    def test_clock(self):
        # h = 0.84^2.8: cold at or below it, (h / u)^(1 / 2.8) above; full duty gives back 0.84.
        h = 0.84 ** 2.8
        self.assertEqual(f.clock(h, h), 1.0)
        self.assertAlmostEqual(f.clock(1.0, h), 0.84, places=12)
        self.assertAlmostEqual(f.clock(0.8, h), (h / 0.8) ** (1 / 2.8), places=12)

    def test_transient_from_idle(self):
        # 1 ms kernels, rise 30 ms: cold until u = 1 - e^(-t / 30) passes h = 0.614 (t = 28.6 ms), then
        # slower, approaching 1 / 0.84 of cold.
        ks = f.transient(1.0, 0.84, 30.0, 2000.0)
        h = 0.84 ** 2.8
        onset = -30.0 * math.log(1.0 - h)
        self.assertTrue(all(d == 1.0 for t, d in ks if t + d < onset - 1.0))
        self.assertGreater(ks[40][1], 1.0)
        self.assertAlmostEqual(ks[-1][1], 1.0 / 0.84, places=4)

    def test_bursts(self):
        # Short rare bursts stay cold; bursts far longer than rise run at the continuous clock.
        self.assertEqual(f.burst_time(1.0, 0.84, 30.0, 200.0, 2.0, 0.05), 1.0)
        self.assertAlmostEqual(f.burst_time(1.0, 0.84, 30.0, 200.0, 5000.0, 0.5), 1.0 / 0.84, places=3)


    def test_lockstep_duty_and_change_from_the_kernels(self):
        # One dtype: continuous 1.2 ms kernels back to back (duty 1), and 1.0 ms kernels with 1 ms gaps
        # after every 9 (9 of 10 ms busy). Measured: 1.0 against 1.2 = -16.7 %; duties from the timestamps.
        rows = []
        for i in range(4000):
            rows.append({"experiment": "lockstep", "dtype": "fp8", "duty": "1.0", "start_ms": str(1.2 * i),
                         "dur_ms": "1.2"})
        t = 0.0
        for i in range(4000):
            rows.append({"experiment": "lockstep", "dtype": "fp8", "duty": "0.9", "start_ms": str(t), "dur_ms": "1.0"})
            t += 2.0 if i % 9 == 8 else 1.0
        s = {"fp8": {"cold": 1.0, "continuous": 1.0 / 0.84}}
        (dt, nominal, duty, ref, measured, fitted, symmetric), = f.lockstep(rows, s, 30.0, 200.0)
        self.assertEqual((dt, nominal), ("fp8", 0.9))
        self.assertAlmostEqual(ref, 1.0, places=6)
        self.assertAlmostEqual(duty, 0.9, places=2)
        self.assertAlmostEqual(measured, 100 * (1.0 / 1.2 - 1), places=6)
        # The model: a GPU idle a tenth of the time runs no slower than one never idle.
        self.assertLessEqual(fitted, 0.0)
        self.assertLessEqual(symmetric, fitted)

    def test_the_shipped_defaults_are_the_fit(self):
        # hardware/dvfs.hpp's rise_ms, fall_ms and full_duty_clock are this fit on the shipped H200 data
        # (the clock under continuous load rounded to 2 places: BF16 0.845, FP8 0.840).
        import re
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
        with open(os.path.join(root, "hardware", "dvfs.hpp")) as h:
            header = h.read()

        def default(name):
            return float(re.search(rf"double {name} = ([0-9.]+);", header).group(1))

        rows = f.summarise.read(os.path.join(root, "data", "power", "h200-gemm-kernels.csv.gz"))
        s = f.summarise.summarise(rows)
        rise, fall = f.fit(rows, s)
        self.assertEqual(default("rise_ms"), rise)
        self.assertEqual(default("fall_ms"), fall)
        self.assertEqual(default("full_duty_clock"), round(min(x["cold"] / x["continuous"] for x in s.values()), 2))

if __name__ == "__main__":
    unittest.main()
