// SPDX-License-Identifier: Apache-2.0
// activated_experts.* on hand-made layers: the most and the mean activated experts per GPU, per layer.
#include <catch2/catch.hpp>

#include <array>
#include <limits>

#include "sim/activated_metric.hpp"
#include "tests/support/figures.hpp"

using namespace epsim;

TEST_CASE("activated experts per GPU: max and mean over the group's GPUs, averaged over layers", "[quick]") {
  serving::MetricsWindow w;
  w.warmup_s = 10e-9;  // steps starting before 10 ns are not measured
  serving::ActivatedMetric m(2, w);
  const std::array<std::int32_t, 2> a{3, 1};  // max 3, mean 2
  const std::array<std::int32_t, 2> b{2, 2};  // max 2, mean 2
  const std::array<std::int32_t, 4> other{8, 8, 8, 8};
  serving::LayerRecord l;
  l.group = 0;
  l.gpu_activated = a;
  m.on_layer(l);
  l.gpu_activated = b;
  m.on_layer(l);
  serving::LayerRecord g1;  // group 1's step starts before the measurement window: not counted
  g1.group = 1;
  g1.gpu_activated = other;
  m.on_layer(g1);
  serving::StepRecord s0;
  s0.group = 0;
  s0.start_ns = 10;
  m.on_step(s0);
  serving::StepRecord s1;
  s1.group = 1;
  s1.start_ns = 5;
  m.on_step(s1);
  const auto f = test::figures(m, {10, std::numeric_limits<core::Time>::max()});
  CHECK(f.at("activated_experts.max_per_gpu") == Approx(2.5));
  CHECK(f.at("activated_experts.mean_per_gpu") == Approx(2.0));
}
