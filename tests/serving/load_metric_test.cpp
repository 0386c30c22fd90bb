// SPDX-License-Identifier: Apache-2.0
// gpu_load_std_tokens and gpu_balancedness on hand-made layers: the spread and the mean over the max of
// each layer's token-expert pairs per GPU, averaged over the measured layers.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/load_std_metric.hpp"
#include "tests/support/figures.hpp"

using namespace epsim;

TEST_CASE("GPU load spread and balancedness per layer, averaged over the measured layers", "[quick]") {
  serving::MetricsWindow w;
  const std::vector<int> groups{4};
  serving::LoadStdMetric m(groups, w);
  const std::array<std::int32_t, 4> a{10, 30, 20, 20};  // mean 20, max 30, std sqrt(50)
  const std::array<std::int32_t, 4> b{8, 8, 8, 8};      // balanced: std 0, mean / max 1
  const std::array<std::int32_t, 4> idle{0, 0, 0, 0};   // no pairs: no balancedness, std 0
  serving::LayerRecord l;
  l.group = 0;
  for (const auto* pairs : {&a, &b, &idle}) {
    l.gpu_tokens = *pairs;
    m.on_layer(l);
  }
  serving::StepRecord s;
  s.group = 0;
  s.start_ns = 1;
  m.on_step(s);
  const auto f = test::figures(m, {0, std::numeric_limits<core::Time>::max()});
  CHECK(f.at("gpu_load_std_tokens") == Approx(std::sqrt(50.0) / 3.0));
  CHECK(f.at("gpu_balancedness") == Approx((20.0 / 30.0 + 1.0) / 2.0));
}
