# SPDX-License-Identifier: Apache-2.0
"""power_response.py's burst loop on a stand-in for torch (no GPU): kernels in bursts, gaps between."""
import os
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import power_response as pr  # noqa: E402


class FakeEvent:
    """A CUDA event that records host time; elapsed_time in ms like torch's."""

    def __init__(self, enable_timing=True):
        self.t = None

    def record(self):
        self.t = time.monotonic()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return 1000.0 * (other.t - self.t)


class FakeCuda:
    Event = FakeEvent

    @staticmethod
    def synchronize():
        pass


class FakeTorch:
    cuda = FakeCuda


class BurstsTest(unittest.TestCase):
    def test_bursts_leave_gaps_and_time_every_kernel(self):
        # 1 ms "kernels" in 5 ms bursts with 20 ms gaps for 0.2 s: the kernels are timed, and the gaps show
        # between bursts as starts further apart than a kernel.
        kernels = pr.bursts(FakeTorch, lambda: time.sleep(0.001), 0.0, 0.2, 5, 20)
        self.assertGreater(len(kernels), 10)
        self.assertTrue(all(d >= 0.9 for _, d in kernels))
        starts = [t for t, _ in kernels]
        gaps = [b - a for a, b in zip(starts, starts[1:]) if b - a > 15.0]
        self.assertGreaterEqual(len(gaps), 3)
        # Without a gap the kernels follow one another.
        back_to_back = pr.bursts(FakeTorch, lambda: time.sleep(0.001), 0.0, 0.05, 5, 0)
        starts = [t for t, _ in back_to_back]
        spacing = sorted(b - a for a, b in zip(starts, starts[1:]))
        self.assertLess(spacing[len(spacing) // 2], 15.0)  # the median: robust to a loaded machine's hiccup


if __name__ == "__main__":
    unittest.main()
