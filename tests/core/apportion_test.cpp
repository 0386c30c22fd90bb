// SPDX-License-Identifier: Apache-2.0
// Largest-remainder apportionment by hand.
#include <catch2/catch.hpp>
#include <vector>

#include "core/apportion.hpp"

using epsim::core::apportion;

TEST_CASE("apportion gives floors, then the leftovers to the largest remainders, ties to the lower index") {
  // 10 units at 3 : 3 : 1 -> quotas 4.2857, 4.2857, 1.4286: floors 4, 4, 1; one unit left goes to the
  // largest remainder (0.4286 at index 2).
  std::vector<double> q{10.0 * 3 / 7, 10.0 * 3 / 7, 10.0 / 7};
  std::vector<std::int32_t> s(3);
  apportion(10, q, s);
  REQUIRE(s == std::vector<std::int32_t>{4, 4, 2});
  // Equal remainders: 5 units over quotas 2.5, 2.5 -> the lower index gets the spare unit.
  std::vector<double> t{2.5, 2.5};
  std::vector<std::int32_t> u(2);
  apportion(5, t, u);
  REQUIRE(u == std::vector<std::int32_t>{3, 2});
  // Whole quotas stay as they are.
  std::vector<double> w{2.0, 0.0, 1.0};
  std::vector<std::int32_t> v(3);
  apportion(3, w, v);
  REQUIRE(v == std::vector<std::int32_t>{2, 0, 1});
}
