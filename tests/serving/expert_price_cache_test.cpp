// SPDX-License-Identifier: Apache-2.0
// The memoised expert prices equal the roofline's direct price bit for bit, for GPU models with and
// without a smooth knee, static speed factors (stress-weighted) and a second GPU model, and are priced
// directly (never memoised) while speeds drift.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "core/random_streams.hpp"
#include "hardware/roofline.hpp"
#include "models/layer_work.hpp"
#include "models/model_spec.hpp"
#include "sim/expert_price_cache.hpp"

using namespace epsim;

namespace {

double direct(const hardware::CostModel& cost, const models::ModelSpec& m, int gpu, std::int64_t padded,
              std::int64_t tokens, std::int32_t activated) {
  return cost.kernel_ns(gpu, models::expert_ffn_work(m, static_cast<double>(padded), static_cast<double>(tokens),
                                                     static_cast<double>(activated)));
}

// Sweeps (tokens, activated, padded) over decode and prefill sizes on every GPU, twice (the second sweep
// reads what the first stored, after the collisions of a direct-mapped table); returns mismatches.
int mismatches(serving::ExpertPriceCache& cache, const hardware::CostModel& cost, const models::ModelSpec& m,
               int first_gpu, int gpus) {
  const std::vector<std::int64_t> token_grid = {1,  2,   3,   4,   5,   7,    8,    13,   16,   22,    31,
                                                64, 100, 255, 256, 511, 1000, 2048, 4095, 4096, 16384, 131072};
  int bad = 0;
  for (int sweep = 0; sweep < 2; ++sweep) {
    for (int g = 0; g < gpus; ++g) {
      for (const std::int64_t tokens : token_grid) {
        for (std::int32_t activated = 1; activated <= std::min<std::int64_t>(tokens, 9); ++activated) {
          for (const std::int64_t tile : {1, 16, 64, 128}) {
            const std::int64_t padded =
                std::max(tokens, (tokens + tile - 1) / tile * tile + (activated - 1) * (tile - 1));
            if (cache.ns(g, padded, tokens, activated) != direct(cost, m, first_gpu + g, padded, tokens, activated)) {
              ++bad;
            }
          }
        }
      }
    }
  }
  return bad;
}

}  // namespace

TEST_CASE("memoised expert prices equal the direct roofline price bit for bit", "[sim][pricing]") {
  for (const std::string model : {"deepseek-v3", "qwen3-235b-a22b"}) {
    const models::ModelSpec m = models::load_model_preset(model);
    for (const std::string gpu : {"h200", "h100-calibrated", "b200", "mi355x"}) {
      INFO(model << " on " << gpu);
      // Stress-weighted static factors; GPUs 1 and 3 share a factor (one price class), 4 and 5 another model.
      hardware::VariabilityConfig dynamics;
      hardware::RooflineCostModel cost(hardware::load_gpu_preset(gpu), {1.0, 0.9, 1.13, 0.9, 1.0, 0.8}, dynamics,
                                       core::RandomStreams(7));
      cost.set_gpu_model(4, 2, hardware::load_gpu_preset("h100"));
      CHECK(cost.price_class(1) == cost.price_class(3));
      CHECK(cost.price_class(0) != cost.price_class(4));  // same factor, another GPU model
      CHECK(cost.price_class(0) != cost.price_class(1));
      serving::ExpertPriceCache cache(m, cost, 1, 5);  // GPUs 1..5: an offset group
      CHECK(mismatches(cache, cost, m, 1, 5) == 0);
    }
  }
}

TEST_CASE("one price class prices a key once, drifting speeds never memoised", "[sim][pricing]") {
  const models::ModelSpec m = models::load_model_preset("deepseek-v3");
  hardware::VariabilityConfig dynamics;
  hardware::RooflineCostModel cost(hardware::load_gpu_preset("h200"), {0.9, 1.0, 0.9}, dynamics,
                                   core::RandomStreams(7));
  serving::ExpertPriceCache cache(m, cost, 0, 3);
  cache.ns(0, 64, 5, 4);
  cache.ns(2, 64, 5, 4);  // the same class as GPU 0: found
  CHECK(cache.misses() == 1);
  cache.ns(1, 64, 5, 4);  // another factor: priced
  CHECK(cache.misses() == 2);

  dynamics.drift.stddev = 0.05;
  hardware::RooflineCostModel drifting(hardware::load_gpu_preset("h200"), {0.9, 1.0, 0.9}, dynamics,
                                       core::RandomStreams(7));
  CHECK(drifting.price_class(0) == -1);
  serving::ExpertPriceCache direct_only(m, drifting, 0, 3);
  for (const core::Time now : {core::Time{0}, core::Time{1'000'000'000}, core::Time{90'000'000'000}}) {
    drifting.advance_to(now);
    direct_only.refresh();
    CHECK(mismatches(direct_only, drifting, m, 0, 3) == 0);
  }
  CHECK(direct_only.misses() == 0);
}

TEST_CASE("a pricer of 1024 GPUs with its larger table still prices bit for bit", "[sim][pricing]") {
  const models::ModelSpec m = models::load_model_preset("deepseek-v3");
  hardware::VariabilityConfig dynamics;
  // Four speed classes over 1,024 GPUs (every fourth GPU alike).
  std::vector<double> factors(1024);
  for (std::size_t g = 0; g < factors.size(); ++g) {
    factors[g] = 0.85 + 0.05 * static_cast<double>(g % 4);
  }
  hardware::RooflineCostModel cost(hardware::load_gpu_preset("h200"), factors, dynamics, core::RandomStreams(3));
  serving::ExpertPriceCache cache(m, cost, 0, 1024);
  CHECK(mismatches(cache, cost, m, 0, 1024) == 0);
  CHECK(cache.misses() > 0);
}

TEST_CASE("decode keys in the small table price bit for bit and idle GPUs cost nothing", "[sim][pricing]") {
  const models::ModelSpec m = models::load_model_preset("deepseek-v3");
  hardware::VariabilityConfig dynamics;
  hardware::RooflineCostModel cost(hardware::load_gpu_preset("h200"), {1.0, 0.9}, dynamics, core::RandomStreams(7));
  serving::ExpertPriceCache cache(m, cost, 0, 2);
  int bad = 0;
  for (int sweep = 0; sweep < 2; ++sweep) {
    for (int g = 0; g < 2; ++g) {
      // Every small key (and its neighbours past the table's edges), with two paddings of the same
      // (tokens, activated) in turn: the entry is replaced, never confused.
      for (std::int64_t tokens = 1; tokens <= 129; ++tokens) {
        for (std::int32_t activated = 1; activated <= std::min<std::int64_t>(tokens, 9); ++activated) {
          for (const std::int64_t padded : {16 * static_cast<std::int64_t>(activated), 64 * std::int64_t{activated}}) {
            if (cache.ns(g, padded, tokens, activated) != direct(cost, m, g, padded, tokens, activated)) {
              ++bad;
            }
          }
        }
      }
    }
  }
  CHECK(bad == 0);
  CHECK(cache.ns(0, 0, 0, 0) == 0.0);
  CHECK(cache.ns(1, 0, 0, 0) == 0.0);
}
