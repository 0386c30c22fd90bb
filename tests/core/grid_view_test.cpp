// SPDX-License-Identifier: Apache-2.0
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "core/grid_view.hpp"

using namespace epsim::core;

TEST_CASE("grid views index row-major like the hand-written offsets they replace") {
  // W[pass][layer][origin][expert] of 2 x 3 x 4 x 5: every element's offset by hand.
  std::vector<double> w(2 * 3 * 4 * 5);
  std::iota(w.begin(), w.end(), 0.0);
  const auto v = grid(w, 2, 3, 4, 5);
  REQUIRE(v.size() == w.size());
  for (int q = 0; q < 2; ++q) {
    for (int l = 0; l < 3; ++l) {
      for (int o = 0; o < 4; ++o) {
        for (int e = 0; e < 5; ++e) {
          REQUIRE(v(q, l, o, e) == static_cast<double>(((q * 3 + l) * 4 + o) * 5 + e));
        }
      }
    }
  }
  // A row is the contiguous last dimension.
  const std::span<double> row = v.row(1, 2, 3);
  REQUIRE(row.size() == 5);
  REQUIRE(row[0] == static_cast<double>(((1 * 3 + 2) * 4 + 3) * 5));
  // Writes go to the buffer.
  v(0, 0, 0, 1) = -1.0;
  REQUIRE(w[1] == -1.0);
  // Read-only views of const data.
  const std::vector<int> c{1, 2, 3, 4, 5, 6};
  const auto m = grid(c, 2, 3);
  REQUIRE(m(1, 0) == 4);
  REQUIRE(m.row(1)[2] == 6);
}
