// SPDX-License-Identifier: Apache-2.0
// Cost curves C_g(n, a) as policies see them: linear interpolation between profile points, the ends,
// between activation rows, and malformed profiles rejected with the GPU and point named.
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "policies/cost_curves.hpp"

using namespace epsim::policies;
using Catch::Contains;

TEST_CASE("cost curves interpolate linearly, run to the origin below and keep the last slope above") {
  const CostCurves c({{10, 20, 40}, {10}}, {{100, 300, 500}, {100}});
  REQUIRE(c.num_gpus() == 2);
  REQUIRE_FALSE(c.exact());
  REQUIRE(c.ns(0, 0.0) == 0.0);  // no tokens, no kernel
  REQUIRE(c.ns(0, -3.0) == 0.0);
  REQUIRE(c.ns(0, 5.0) == 50.0);    // (0, 0) -> (10, 100)
  REQUIRE(c.ns(0, 10.0) == 100.0);  // a sample point
  REQUIRE(c.ns(0, 15.0) == 200.0);  // halfway to (20, 300)
  REQUIRE(c.ns(0, 30.0) == 400.0);  // halfway to (40, 500)
  REQUIRE(c.ns(0, 60.0) == 700.0);  // beyond: slope 10 per token continues
  REQUIRE(c.ns(1, 5.0) == 50.0);    // one point: proportional through the origin
  REQUIRE(c.ns(1, 30.0) == 300.0);
  const CostCurves z({{0, 10}}, {{7, 17}});  // a first point at zero tokens
  REQUIRE(z.ns(0, 5.0) == 12.0);
  const CostCurves down({{10, 20}}, {{100, 90}});  // a noisy last segment that falls: flat beyond it
  REQUIRE(down.ns(0, 15.0) == 95.0);
  REQUIRE(down.ns(0, 40.0) == 90.0);
  const CostCurves e(2, [](int g, double n) { return (g + 1) * n; });
  REQUIRE(e.exact());
  REQUIRE(e.ns(1, 4.0) == 8.0);
  REQUIRE(e.ns(1, 0.0) == 0.0);
}

TEST_CASE("activation rows interpolate linearly in a, clamp at the ends, and the top row is C_g(n)") {
  // GPU 0: rows at a = 1 (10 ns a token) and a = 4 (10 ns a token + 30 ns); GPU 1: token-only.
  std::vector<std::vector<CostCurves::Row>> rows(2);
  rows[0].push_back({1.0, {10, 20}, {100, 200}});
  rows[0].push_back({4.0, {10, 20}, {130, 230}});
  rows[1].push_back({std::numeric_limits<double>::infinity(), {10}, {50}});
  const CostCurves c(rows);
  REQUIRE(c.activation_aware());
  REQUIRE(c.ns(0, 15.0, 1.0) == 150.0);
  REQUIRE(c.ns(0, 15.0, 4.0) == 180.0);
  REQUIRE(c.ns(0, 15.0, 2.0) == 160.0);  // a third of the way from 150 to 180
  REQUIRE(c.ns(0, 15.0, 0.5) == 150.0);  // below the first row: the first row
  REQUIRE(c.ns(0, 15.0, 9.0) == 180.0);  // above the last: the last
  REQUIRE(c.ns(0, 15.0) == 180.0);       // no a: every expert activated
  REQUIRE(c.ns(0, 0.0, 2.0) == 0.0);
  REQUIRE(c.ns(1, 20.0, 1.0) == 100.0);  // a token-only GPU ignores a
  REQUIRE(c.sample_tokens(0) == std::vector<double>{10, 20});
  REQUIRE(c.sample_ns(0) == std::vector<double>{130, 230});
  const CostCurves tokens_only({{10}}, {{5}});
  REQUIRE_FALSE(tokens_only.activation_aware());
  REQUIRE(tokens_only.ns(0, 20.0, 1.0) == 10.0);
  const CostCurves e(1, CostCurves::ExactActivated([](int, double n, double a) { return n + std::min(a, 8.0); }));
  REQUIRE(e.activation_aware());
  REQUIRE(e.ns(0, 10.0, 3.0) == 13.0);
  REQUIRE(e.ns(0, 10.0) == 18.0);
  REQUIRE(activation_probability(0.0) == 0.0);
  REQUIRE(activation_probability(1.0) == Approx(1.0 - std::exp(-1.0)));
}

TEST_CASE("malformed cost curves are rejected, naming the GPU and the point") {
  REQUIRE_THROWS_WITH(CostCurves({{10, 10}}, {{1, 2}}), Contains("GPU 0") && Contains("strictly ascending"));
  REQUIRE_THROWS_WITH(CostCurves({{1}, {1, 2}}, {{1}, {1}}), Contains("GPU 1: 2 token counts and 1 latencies"));
  REQUIRE_THROWS_WITH(CostCurves({{1, 2}}, {{1, -2}}), Contains("latency at 2 tokens is -2"));
  const std::vector<std::vector<double>> none;
  REQUIRE_THROWS_WITH(CostCurves(none, none), Contains("one of each per GPU"));
  REQUIRE_THROWS_AS(CostCurves(0, [](int, double) { return 0.0; }), epsim::core::Error);
  REQUIRE_THROWS_WITH(CostCurves({{1, 2}}, {{1, std::numeric_limits<double>::infinity()}}),
                      Contains("expected finite and >= 0"));
  std::vector<std::vector<CostCurves::Row>> rows(1);
  rows[0].push_back({2.0, {1}, {1}});
  rows[0].push_back({2.0, {1}, {2}});
  REQUIRE_THROWS_WITH(CostCurves(rows), Contains("GPU 0") && Contains("row 1 is 2") && Contains("strictly ascending"));
  rows[0].resize(1);
  rows[0][0].activated = 0.5;
  REQUIRE_THROWS_WITH(CostCurves(rows), Contains("expected >= 1"));
}
