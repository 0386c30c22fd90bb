# SPDX-License-Identifier: Apache-2.0
"""scripts/gen_reproductions.py's arithmetic and verdict words against hand calculations."""
import csv
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import gen_reproductions as g  # noqa: E402


class IntervalTest(unittest.TestCase):
    def test_student_t_interval_by_hand(self):
        # 1, 2, 3: mean 2, sd 1, t(0.975, 2) = 4.303, half-width 4.303 / sqrt(3) = 2.4843.
        m, lo, hi = g.interval([1.0, 2.0, 3.0])
        self.assertAlmostEqual(m, 2.0)
        self.assertAlmostEqual(lo, 2.0 - 4.303 / 3 ** 0.5, places=9)
        self.assertAlmostEqual(hi, 2.0 + 4.303 / 3 ** 0.5, places=9)

    def test_six_replications_use_five_degrees_of_freedom(self):
        xs = [-4.0, -3.0, -5.0, -4.0, -3.5, -4.5]
        m, lo, hi = g.interval(xs)
        sd = (sum((x + 4.0) ** 2 for x in xs) / 5) ** 0.5
        self.assertAlmostEqual(m, -4.0)
        self.assertAlmostEqual(hi - m, 2.571 * sd / 6 ** 0.5, places=9)


class VerdictTest(unittest.TestCase):
    def test_words(self):
        # Within 30 % of -11 and significant: reproduces; significant but -3: direction only.
        self.assertEqual(g.verdict(-11.0, [(-12.0, -14.0, -10.0)]), "reproduces")
        self.assertEqual(g.verdict(-11.0, [(-7.75, -9.0, -6.0)]), "reproduces")  # just within 30 %
        self.assertEqual(g.verdict(-11.0, [(-3.2, -4.5, -2.0)]), "direction only")
        # An interval that includes 0, or the wrong sign: does not.
        self.assertEqual(g.verdict(-11.0, [(-11.0, -20.0, 0.5)]), "does not")
        self.assertEqual(g.verdict(-11.0, [(+2.0, +1.0, +3.0)]), "does not")
        # A positive claim, and every change of a range must qualify.
        self.assertEqual(g.verdict(15.0, [(14.0, 12.0, 16.0), (16.0, 15.0, 17.0)]), "reproduces")
        self.assertEqual(g.verdict(15.0, [(14.0, 12.0, 16.0), (3.0, 1.0, 5.0)]), "direction only")

    def test_bands_and_directions(self):
        # A band of -11 to -48 %: sized between 0.7 x 11 = 7.7 and 1.3 x 48 = 62.4 points.
        self.assertEqual(g.verdict((-11.0, -48.0), [(-11.1, -14.3, -7.9)]), "reproduces")
        self.assertEqual(g.verdict((-11.0, -48.0), [(-5.0, -7.0, -3.0)]), "direction only")
        self.assertEqual(g.verdict((1.0, 6.0), [(0.2, -0.5, 0.8)]), "does not")
        self.assertEqual(g.verdict((3.0, 7.0), [(2.2, 1.0, 3.0)]), "reproduces")
        # Only a direction stated: never more than "direction only".
        self.assertEqual(g.verdict(None, [(2.0, 1.0, 3.0)], direction=+1), "direction only")
        self.assertEqual(g.verdict(None, [(-2.4, -5.1, 0.4)], direction=+1), "does not")
        self.assertEqual(g.verdict(None, [(-9.0, -11.0, -7.0)], direction=-1), "direction only")

    def test_cells_by_keeps_file_order(self):
        rows = [{"a": "2", "b": "x", "metric": "m", "mean": "1"}, {"a": "1", "b": "y", "metric": "m", "mean": "2"}]
        cells, (a_levels, b_levels) = g.cells_by(rows, "a", "b")
        self.assertEqual(a_levels, ["2", "1"])
        self.assertEqual(b_levels, ["x", "y"])
        self.assertEqual(cells[("1", "y")]["m"]["mean"], "2")


class TablesTest(unittest.TestCase):
    def test_rel_is_the_paired_difference_over_the_baseline_mean(self):
        r = {"baseline_diff": "-5", "baseline_diff_ci95_low": "-7", "baseline_diff_ci95_high": "-3"}
        self.assertEqual(g.rel(r, {"mean": "100"}), (-5.0, -7.0, -3.0))
        self.assertEqual(g.fmt((-5.0, -7.0, -3.0)), "-5.0 % [-7.0, -3.0]")

    def test_director_load_stable_loads_and_verdict(self):
        # Two intervals: 0.9x queues (offline TTFT 100 ms), 2x does not (30 ms). DIRECTOR's E2E -3 % at 2x.
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "director-load"))
            fields = ["interval", "policy", "metric", "mean", "baseline_diff", "baseline_diff_ci95_low",
                      "baseline_diff_ci95_high"]
            rows = []
            for interval, ttft, e2e_diff in (("0.9x", 100.0, -20.0), ("2x", 30.0, -3.0)):
                rows.append([interval, "offline", "ttft_ms.mean", ttft, 0, 0, 0])
                for metric in ("e2e_ms.mean", "mean_step_ms"):
                    rows.append([interval, "offline", metric, 100.0, 0, 0, 0])
                    for policy in ("director", "reactive"):
                        rows.append([interval, policy, metric, 100.0 + e2e_diff, e2e_diff, e2e_diff - 1, e2e_diff + 1])
            with open(os.path.join(d, "director-load", "points.csv"), "w", newline="") as h:
                w = csv.writer(h)
                w.writerow(fields)
                w.writerows(rows)
            g.out = d
            lines = g.director_load()
        self.assertIn("| 0.9x | 100.0 | -20.0 % [-21.0, -19.0] |", lines[2])
        self.assertIn("intervals 2x)", lines[-1])  # only 2x is stable: 100 > 1.1 x 30
        self.assertIn("-3.0 to -3.0 %", lines[-1])
        self.assertTrue(lines[-1].endswith("**direction only**."))


if __name__ == "__main__":
    unittest.main()
