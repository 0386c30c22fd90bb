# SPDX-License-Identifier: Apache-2.0
"""summarise.py's medians and response time on a hand-made series (no GPU)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import summarise as s  # noqa: E402


def row(experiment, t, d, burst="", duty=""):
    return {"experiment": experiment, "dtype": "bf16", "rep": "0", "burst_ms": burst, "duty": duty, "index": "0",
            "start_ms": str(t), "dur_ms": str(d)}


class SummariseTest(unittest.TestCase):
    def test_by_hand(self):
        # 1.0 ms kernels until 40 ms, 1.2 ms after: cold 1.0, continuous 1.2 (+20 %), 5 % slower from the
        # 40-45 ms bin. Bursts: 8 kernels, the first 2 dropped, median of 1.1 x 6 = 1.1 (-8.3 % vs 1.2).
        rows = [row("transient", t, 1.0 if t < 40 else 1.2) for t in range(0, 3000, 1)]
        rows += [row("duty", i, 9.0 if i < 2 else 1.1, "10", "0.5") for i in range(8)]
        x = s.summarise(rows)["bf16"]
        self.assertEqual(x["cold"], 1.0)
        self.assertEqual(x["continuous"], 1.2)
        self.assertEqual(x["response_ms"], 40)
        self.assertAlmostEqual(x["duty"][(10, 0.5)], 1.1)
        line = s.table({"bf16": x})[2]
        self.assertIn("+20.0 %", line)
        self.assertIn("40 ms", line)
        self.assertIn("10 ms / 50 %: -8.3 %", line)


if __name__ == "__main__":
    unittest.main()


class SmiTest(unittest.TestCase):
    def test_by_hand(self):
        # Above 600 W: clocks 1400, 1500, 1450 -> median 1450; 2 of 3 capped; highest sampled 1980 (idle row).
        rows = [["t", "1980", "80.0", "Not Active"], ["t", "1400", "690.0", "Active"],
                ["t", "1500", "650.0", "Not Active"], ["t", "1450", "700.0", "Active"]]
        self.assertEqual(s.smi_line(rows, 600.0), "nvidia-smi, 3 samples above 600 W: median SM clock 1450 MHz "
                                                   "(highest sampled 1980 MHz), software power cap active in 67 %")
        self.assertEqual(s.smi_line(rows[:1], 600.0), "nvidia-smi: no sample above 600 W")
