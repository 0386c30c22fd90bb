// SPDX-License-Identifier: Apache-2.0
// The profile policies see: the true C_g(n) spreads n token-expert pairs evenly over the GPU's local
// experts and pads each to the tile (checked by hand against the cost model), the profile samples it at
// the tile boundaries and sparsely beyond, noise-free samples are exact, noisy ones have the configured
// spread, and the exact mode is the cost model itself.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "hardware/gpu_spec.hpp"
#include "hardware/roofline.hpp"
#include "models/layer_work.hpp"
#include "models/model_spec.hpp"
#include "sim/expert_cost_profile.hpp"
#include "tests/support/tiny_model.hpp"

using namespace epsim;

TEST_CASE("the true expert-layer cost spreads tokens evenly over the local experts, padded to the tile") {
  const models::ModelSpec m = test::tiny_model(2);
  hardware::GpuSpec g = test::paper_gpu();
  g.moe_tile_small = 16;
  g.moe_tile_large = 16;
  const hardware::RooflineCostModel cost(g, {1.0, 0.5});
  const auto by_hand = [&](int gpu, double padded, double tokens, double active) {
    return cost.kernel_ns(gpu, models::expert_ffn_work(m, padded, tokens, active));
  };
  const int slots = 2;
  REQUIRE(serving::expert_layer_ns(m, cost, 0, 0.0, slots) == 0.0);
  REQUIRE(serving::expert_layer_ns(m, cost, 0, 1.0, slots) == by_hand(0, 16, 1, 1));    // one expert, one tile
  REQUIRE(serving::expert_layer_ns(m, cost, 0, 3.0, slots) == by_hand(0, 32, 3, 2));    // 2 + 1 tokens: a tile each
  REQUIRE(serving::expert_layer_ns(m, cost, 1, 40.0, slots) == by_hand(1, 64, 40, 2));  // 20 + 20 -> 32 + 32
  REQUIRE(serving::expert_layer_ns(m, cost, 1, 33.0, slots) == by_hand(1, 64, 33, 2));  // 17 + 16 -> 32 + 16
  REQUIRE(serving::expert_layer_ns(m, cost, 1, 32.5, slots) == by_hand(1, 48, 33, 2));  // whole tokens: 33
  // C_g(n, a): 40 tokens on one activated expert pad to 48; a fractional a interpolates; a >= slots is
  // every slot.
  REQUIRE(serving::expert_layer_ns(m, cost, 1, 40.0, slots, 1.0) == by_hand(1, 48, 40, 1));
  REQUIRE(serving::expert_layer_ns(m, cost, 1, 40.0, slots, 1.25) ==
          Approx(0.75 * by_hand(1, 48, 40, 1) + 0.25 * by_hand(1, 64, 40, 2)));
  REQUIRE(serving::expert_layer_ns(m, cost, 1, 40.0, slots, 7.0) == by_hand(1, 64, 40, 2));
  REQUIRE(serving::expert_layer_ns(m, cost, 1, 1.0, slots, 2.0) == by_hand(1, 16, 1, 1));  // one token, one expert
}

TEST_CASE("profiled curves sample tile boundaries densely, then sparsely, exact without noise") {
  const models::ModelSpec m = test::tiny_model(2);
  hardware::GpuSpec g = test::paper_gpu();
  g.moe_tile_small = 16;
  g.moe_tile_large = 16;
  const hardware::RooflineCostModel cost(g, {1.0, 0.5});
  policies::CostProfileConfig cfg;
  cfg.noise_cv = 0.0;
  cfg.dense_until_tokens = 256;
  cfg.sparse_interval_tokens = 512;
  cfg.max_tokens = 2048;
  const core::RandomStreams streams(1);
  const int slots = 4;
  const auto curves = serving::make_cost_curves(m, cost, 0, 2, slots, cfg, streams);
  // 1, 2 (experts being activated), 4 (= slots) and 5 (the large tile from here), both edges of every
  // 16 x 4 = 64-token boundary (+ 4: each expert has begun its next tile) to 256, then every 512 from 768.
  const std::vector<double> points{1, 2, 4, 5, 64, 68, 128, 132, 192, 196, 256, 768, 1280, 1792};
  for (int gpu = 0; gpu < 2; ++gpu) {
    REQUIRE(curves->sample_tokens(gpu) == points);
    for (const double n : points) {
      REQUIRE(curves->ns(gpu, n) == serving::expert_layer_ns(m, cost, gpu, n, slots));
    }
  }
  // Between points: the straight line. From 68 to 128 the true curve is flat (every expert padded to
  // 32 tokens), so the line is exact there.
  const double mid =
      0.5 * (serving::expert_layer_ns(m, cost, 1, 68, slots) + serving::expert_layer_ns(m, cost, 1, 128, slots));
  REQUIRE(curves->ns(1, 98.0) == Approx(mid));
  REQUIRE(curves->ns(1, 98.0) == Approx(serving::expert_layer_ns(m, cost, 1, 98, slots)));
  // The slow GPU (factor 0.5) is slower at every point.
  for (const double n : points) {
    REQUIRE(curves->ns(1, n) > curves->ns(0, n));
  }
  // The activation rows: a = 1, 2, 3 below the 4 slots, each sampled at its own tile boundaries
  // (16 x a tokens apart), each exact without noise; the top row is the one above.
  REQUIRE(curves->activation_aware());
  REQUIRE(curves->rows(0).size() == 4);
  REQUIRE(curves->rows(0)[0].activated == 1.0);
  REQUIRE(curves->rows(0)[1].activated == 2.0);
  // Row a = 2: 1, both sides of the second activation (2, 3), both sides of the tile switch after the
  // 4 slots' tokens (4, 5), then every 16 x 2 = 32-token boundary and its + 2 edge, then sparse.
  REQUIRE(curves->rows(0)[1].tokens == std::vector<double>{1,   2,   3,   4,   5,   32,  34,  64,  66,  96,   98,  128,
                                                           130, 160, 162, 192, 194, 224, 226, 256, 768, 1280, 1792});
  for (const auto& row : curves->rows(1)) {
    for (std::size_t i = 0; i < row.tokens.size(); ++i) {
      REQUIRE(row.ns[i] == serving::expert_layer_ns(m, cost, 1, row.tokens[i], slots, row.activated));
    }
  }
  // Between rows: linear in a (a = 2.5 is halfway from the 2-row to the 3-row).
  REQUIRE(curves->ns(1, 192.0, 2.5) == Approx(0.5 * (serving::expert_layer_ns(m, cost, 1, 192, slots, 2.0) +
                                                     serving::expert_layer_ns(m, cost, 1, 192, slots, 3.0))));
  // Two experts activated are cheaper than four for the same tokens (less padding and fewer weights).
  REQUIRE(curves->ns(1, 100.0, 2.0) < curves->ns(1, 100.0, 4.0));
  // Without activation_aware: one row, the same top row (the same noise stream).
  cfg.activation_aware = false;
  const auto flat = serving::make_cost_curves(m, cost, 0, 2, slots, cfg, streams);
  REQUIRE_FALSE(flat->activation_aware());
  REQUIRE(flat->sample_ns(1) == curves->sample_ns(1));
  cfg.activation_aware = true;
  // Exact mode: the cost model itself, at any n.
  cfg.mode = policies::CostProfileMode::exact;
  const auto exact = serving::make_cost_curves(m, cost, 0, 2, slots, cfg, streams);
  REQUIRE(exact->exact());
  REQUIRE(exact->ns(1, 97.0) == serving::expert_layer_ns(m, cost, 1, 97.0, slots));
  REQUIRE(exact->ns(1, 97.0, 1.0) == serving::expert_layer_ns(m, cost, 1, 97.0, slots, 1.0));
}

TEST_CASE("profile noise has the configured spread and is the same for the same seed") {
  const models::ModelSpec m = test::tiny_model(2);
  const hardware::RooflineCostModel cost(test::paper_gpu(), {1.0});
  policies::CostProfileConfig cfg;
  cfg.noise_cv = 0.05;
  cfg.dense_until_tokens = 8192;
  cfg.max_tokens = 1 << 20;
  cfg.sparse_interval_tokens = 512;
  const auto a = serving::make_cost_curves(m, cost, 0, 1, 8, cfg, core::RandomStreams(3));
  const auto b = serving::make_cost_curves(m, cost, 0, 1, 8, cfg, core::RandomStreams(3));
  REQUIRE(a->sample_ns(0) == b->sample_ns(0));
  double sum = 0.0;
  double sum2 = 0.0;
  const auto& t = a->sample_tokens(0);
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double err = a->sample_ns(0)[i] / serving::expert_layer_ns(m, cost, 0, t[i], 8) - 1.0;
    sum += err;
    sum2 += err * err;
  }
  const auto n = static_cast<double>(t.size());
  REQUIRE(n > 1000);
  const double sd = std::sqrt(sum2 / n - (sum / n) * (sum / n));
  REQUIRE(std::abs(sum / n) < 0.01);
  REQUIRE(sd == Approx(0.05).epsilon(0.1));
}

TEST_CASE("a noise-free activation-aware profile of a real preset stays within 5 % of the cost model") {
  // OLMoE (16 experts per GPU at EP4) on an H200: every activated count 1..16 at token counts up to 3,000
  // (decode to prefill chunks). The residual is each row's straight lines across the roofline's kink
  // between sample points (4.1 % at most here); rows only at a = 1, 2, 4, 8, 16 were off by up to 22 %
  // (the padding's staircase in a).
  const models::ModelSpec m = models::load_model_preset("olmoe-1b-7b");
  const hardware::RooflineCostModel cost(hardware::load_gpu_preset("h200"), {1.0});
  policies::CostProfileConfig cfg;
  cfg.noise_cv = 0.0;
  const auto c = serving::make_cost_curves(m, cost, 0, 1, 16, cfg, core::RandomStreams(1));
  REQUIRE(c->rows(0).size() == 16);
  double worst = 0.0;
  for (int n = 1; n < 3000; n += 7) {
    for (int a = 1; a <= std::min(16, n); ++a) {
      const double truth = serving::expert_layer_ns(m, cost, 0, n, 16, a);
      worst = std::max(worst, std::abs(c->ns(0, n, a) / truth - 1.0));
    }
  }
  REQUIRE(worst <= 0.05);
}
