// SPDX-License-Identifier: Apache-2.0
// The curve-fit figures on hand-made layers: predicted slowest GPU from the curves against the priced one.
#include <catch2/catch.hpp>

#include <array>

#include "sim/curve_fit_metric.hpp"
#include "tests/support/figures.hpp"

using namespace epsim;

TEST_CASE("curve fit: predicted against priced slowest GPU, by hand", "[quick]") {
  // GPU 0 costs 2 ns a token, GPU 1 3 ns.
  auto curves =
      std::make_shared<const policies::CostCurves>(2, [](int g, double n) { return (g == 0 ? 2.0 : 3.0) * n; });
  serving::MetricsWindow window;  // no warm-up, no cool-down
  serving::CurveFitMetric m(curves, 0, 2, window);
  const std::array<std::int32_t, 2> tokens_a{10, 8};  // predicted 20 / 24: GPU 1
  const std::array<double, 2> priced_a{30.0, 20.0};   // priced: GPU 0 at 30
  const std::array<std::int32_t, 2> tokens_b{5, 1};   // predicted 10 / 3: GPU 0
  const std::array<double, 2> priced_b{12.5, 4.0};    // priced: GPU 0 at 12.5
  const std::array<std::int32_t, 2> activated{2, 2};  // token-only curves ignore it
  serving::LayerRecord l;
  l.group = 0;
  l.moe_layer = 0;
  l.gpu_tokens = tokens_a;
  l.gpu_activated = activated;
  l.gpu_expert_ns = priced_a;
  l.expert_max_ns = 30.0;
  m.on_layer(l);
  l.moe_layer = 1;
  l.gpu_tokens = tokens_b;
  l.gpu_expert_ns = priced_b;
  l.expert_max_ns = 12.5;
  m.on_layer(l);
  serving::LayerRecord other = l;  // another group's layer is not for these curves
  other.group = 1;
  m.on_layer(other);
  serving::StepRecord s;
  s.group = 0;
  m.on_step(s);
  const auto f = test::figures(m, {0, std::numeric_limits<core::Time>::max()});
  CHECK(f.at("curve_fit.predicted_expert_ms") == Approx((24.0 + 10.0) / 1e6));
  CHECK(f.at("curve_fit.simulated_expert_ms") == Approx((30.0 + 12.5) / 1e6));
  CHECK(f.at("curve_fit.mean_abs_error") == Approx((0.2 + 0.2) / 2.0));  // |24/30 - 1|, |10/12.5 - 1|
  CHECK(f.at("curve_fit.straggler_agreement") == Approx(0.5));
  CHECK(f.at("curve_fit.worst_layer_error") == Approx(-0.2));  // both -0.2: the first layer
  CHECK(f.at("curve_fit.worst_layer") == 0.0);
}

TEST_CASE("curve fit: activation-aware curves predict from each GPU's activated experts", "[quick]") {
  // C(n, a) = 2 n + 10 a on both GPUs. GPU 0: 10 tokens on 1 expert = 30; GPU 1: 8 tokens on 3 = 46.
  auto curves = std::make_shared<const policies::CostCurves>(
      2, policies::CostCurves::ExactActivated([](int, double n, double a) { return 2.0 * n + 10.0 * a; }));
  serving::CurveFitMetric m(curves, 0, 1, serving::MetricsWindow{});
  const std::array<std::int32_t, 2> tokens{10, 8};
  const std::array<std::int32_t, 2> activated{1, 3};
  const std::array<double, 2> priced{40.0, 50.0};
  serving::LayerRecord l;
  l.gpu_tokens = tokens;
  l.gpu_activated = activated;
  l.gpu_expert_ns = priced;
  l.expert_max_ns = 50.0;
  m.on_layer(l);
  serving::StepRecord s;
  m.on_step(s);
  const auto f = test::figures(m, {0, std::numeric_limits<core::Time>::max()});
  CHECK(f.at("curve_fit.predicted_expert_ms") == Approx(46.0 / 1e6));
  CHECK(f.at("curve_fit.mean_abs_error") == Approx(0.08));  // |46 / 50 - 1|
  CHECK(f.at("curve_fit.straggler_agreement") == Approx(1.0));
}
