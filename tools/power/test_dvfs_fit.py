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


if __name__ == "__main__":
    unittest.main()
