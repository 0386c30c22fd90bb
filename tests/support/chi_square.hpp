// SPDX-License-Identifier: Apache-2.0
#pragma once
// Pearson's chi-square of observed counts against expected ones, for the samplers' goodness-of-fit tests.
#include <cstddef>
#include <vector>

namespace epsim::test {

/// Sum over categories of (observed - expected)^2 / expected; categories expected never to occur (expected
/// 0) are left out (a test checks separately that they were not drawn).
inline double chi_square(const std::vector<double>& observed, const std::vector<double>& expected) {
  double x2 = 0.0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    if (expected[i] > 0.0) {
      x2 += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
    }
  }
  return x2;
}

}  // namespace epsim::test
