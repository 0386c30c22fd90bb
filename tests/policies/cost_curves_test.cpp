// Cost curves C_g(n) as policies see them: linear interpolation between profile points, the ends, and
// malformed profiles rejected with the GPU and point named.
#include <catch2/catch.hpp>

#include "policies/cost_curves.hpp"
#include "sim/core/error.hpp"

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

TEST_CASE("malformed cost curves are rejected, naming the GPU and the point") {
  REQUIRE_THROWS_WITH(CostCurves({{10, 10}}, {{1, 2}}), Contains("GPU 0") && Contains("strictly ascending"));
  REQUIRE_THROWS_WITH(CostCurves({{1}, {1, 2}}, {{1}, {1}}), Contains("GPU 1: 2 token counts and 1 latencies"));
  REQUIRE_THROWS_WITH(CostCurves({{1, 2}}, {{1, -2}}), Contains("latency at 2 tokens is -2"));
  const std::vector<std::vector<double>> none;
  REQUIRE_THROWS_WITH(CostCurves(none, none), Contains("one of each per GPU"));
  REQUIRE_THROWS_AS(CostCurves(0, [](int, double) { return 0.0; }), epsim::core::Error);
}
