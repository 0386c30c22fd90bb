// SPDX-License-Identifier: Apache-2.0
#include "sim/expert_cost_profile.hpp"

#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/layer_work.hpp"

namespace epsim::serving {

namespace {

// n whole tokens evenly over `active` experts (1 <= active <= n), each share padded to the tile.
double even_spread_ns(const models::ModelSpec& model, const hardware::CostModel& cost, int gpu, std::int64_t n,
                      std::int64_t active, int slots_per_gpu) {
  const std::int64_t tile = cost.moe_tile(gpu, n, slots_per_gpu);
  // Even spread: `extra` experts get one token more than the others.
  const std::int64_t base = n / active;
  const std::int64_t extra = n % active;
  const std::int64_t padded =
      extra * hardware::pad_to_tile(base + 1, tile) + (active - extra) * hardware::pad_to_tile(base, tile);
  return cost.kernel_ns(gpu, models::expert_ffn_work(model, static_cast<double>(padded), static_cast<double>(n),
                                                     static_cast<double>(active)));
}

// The activation levels profiled: every count 1 .. slots (the top row). Not fewer: the padding
// a x ceil(n / (a x tile)) x tile is a staircase in a as much as in n (OLMoE's 16 slots on an H200,
// 1,548 tokens: 9 experts pad to 1,728 rows, 8 and 16 both to 2,048), so rows at 1, 2, 4, ... and a
// straight line between them were off by up to 22 %.
std::vector<std::int64_t> activation_levels(int slots_per_gpu, bool activation_aware) {
  std::vector<std::int64_t> levels;
  for (std::int64_t a = activation_aware ? 1 : slots_per_gpu; a <= slots_per_gpu; ++a) {
    levels.push_back(a);
  }
  return levels;
}

// Where GEM's profile samples a row of `cap` activated experts: 1, 2, 4, ... while experts are still
// being activated (the weight-loading part of the curve grows with every expert), both sides of the
// last activation (cap) and of the switch to the large tile (after slots_per_gpu tokens, whatever the
// row), then both edges of every tile boundary of the evenly spread call (at k x tile x cap every
// expert's padding has just been filled; by then + cap every expert has started a new tile: the step
// between them is the staircase's riser), then sparse.
std::vector<std::int64_t> sample_points(const hardware::CostModel& cost, int gpu, std::int64_t cap, int slots_per_gpu,
                                        const policies::CostProfileConfig& cfg) {
  std::vector<std::int64_t> points;
  for (std::int64_t n = 1; n < cap; n *= 2) {
    points.push_back(n);
  }
  points.push_back(cap);
  points.push_back(cap + 1);
  points.push_back(slots_per_gpu);
  points.push_back(slots_per_gpu + 1);
  const std::int64_t step = std::max<std::int64_t>(1, cost.moe_tile(gpu, cfg.dense_until_tokens, slots_per_gpu)) * cap;
  for (std::int64_t n = step; n <= cfg.dense_until_tokens; n += step) {
    points.push_back(n);
    if (n + cap <= cfg.dense_until_tokens) {
      points.push_back(n + cap);
    }
  }
  for (std::int64_t n = cfg.dense_until_tokens + cfg.sparse_interval_tokens; n <= cfg.max_tokens;
       n += cfg.sparse_interval_tokens) {
    points.push_back(n);
  }
  std::sort(points.begin(), points.end());
  points.erase(std::unique(points.begin(), points.end()), points.end());
  return points;
}

}  // namespace

double expert_layer_ns(const models::ModelSpec& model, const hardware::CostModel& cost, int gpu, double tokens,
                       int slots_per_gpu, double activated) {
  const auto n = static_cast<std::int64_t>(std::ceil(tokens));
  if (n <= 0) {
    return 0.0;
  }
  const double cap = std::min(static_cast<double>(std::min<std::int64_t>(n, slots_per_gpu)), std::max(1.0, activated));
  const double lo = std::floor(cap);
  const double at_lo = even_spread_ns(model, cost, gpu, n, static_cast<std::int64_t>(lo), slots_per_gpu);
  if (cap == lo) {
    return at_lo;
  }
  const double at_hi = even_spread_ns(model, cost, gpu, n, static_cast<std::int64_t>(lo) + 1, slots_per_gpu);
  return at_lo + (cap - lo) * (at_hi - at_lo);
}

std::shared_ptr<const policies::CostCurves> make_cost_curves(const models::ModelSpec& model,
                                                             const hardware::CostModel& cost, int gpu_offset, int gpus,
                                                             int slots_per_gpu, const policies::CostProfileConfig& cfg,
                                                             const core::RandomStreams& streams) {
  if (cfg.mode == policies::CostProfileMode::exact) {
    const hardware::CostModel* c = &cost;
    if (!cfg.activation_aware) {
      return std::make_shared<const policies::CostCurves>(
          gpus, policies::CostCurves::Exact([model, c, gpu_offset, slots_per_gpu](int g, double tokens) {
            return expert_layer_ns(model, *c, gpu_offset + g, tokens, slots_per_gpu);
          }));
    }
    return std::make_shared<const policies::CostCurves>(
        gpus, policies::CostCurves::ExactActivated(
                  [model, c, gpu_offset, slots_per_gpu](int g, double tokens, double activated) {
                    return expert_layer_ns(model, *c, gpu_offset + g, tokens, slots_per_gpu, activated);
                  }));
  }
  const std::vector<std::int64_t> levels = activation_levels(slots_per_gpu, cfg.activation_aware);
  std::vector<std::vector<policies::CostCurves::Row>> rows(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) {
    const int gpu = gpu_offset + g;
    const auto id = static_cast<std::uint64_t>(gpu);
    // The top row draws its noise from the stream the token-only profile always used, so C_g(n) is the
    // same whether or not the lower rows are profiled; they draw from their own stream.
    core::Rng top_rng = streams.stream("cost_profile", id);
    core::Rng rows_rng = streams.stream("cost_profile_activated", id);
    boost::random::normal_distribution<double> noise(0.0, 1.0);
    auto& mine = rows[static_cast<std::size_t>(g)];
    mine.resize(levels.size());
    for (std::size_t r = levels.size(); r-- > 0;) {
      core::Rng& rng = r + 1 == levels.size() ? top_rng : rows_rng;
      policies::CostCurves::Row& row = mine[r];
      row.activated = static_cast<double>(levels[r]);
      for (const std::int64_t n : sample_points(cost, gpu, levels[r], slots_per_gpu, cfg)) {
        const double truth =
            expert_layer_ns(model, cost, gpu, static_cast<double>(n), slots_per_gpu, static_cast<double>(levels[r]));
        const double err = cfg.noise_cv > 0.0 ? cfg.noise_cv * noise(rng) : 0.0;
        row.tokens.push_back(static_cast<double>(n));
        row.ns.push_back(std::max(0.0, truth * (1.0 + err)));
      }
    }
  }
  return std::make_shared<const policies::CostCurves>(std::move(rows));
}

}  // namespace epsim::serving
