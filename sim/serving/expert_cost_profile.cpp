#include "sim/serving/expert_cost_profile.hpp"

#include <algorithm>
#include <boost/random/normal_distribution.hpp>
#include <cmath>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/layer_work.hpp"

namespace epsim::serving {

double expert_layer_ns(const models::ModelSpec& model, const hardware::CostModel& cost, int gpu, double tokens,
                       int slots_per_gpu) {
  const auto n = static_cast<std::int64_t>(std::ceil(tokens));
  if (n <= 0) {
    return 0.0;
  }
  const std::int64_t active = std::min<std::int64_t>(n, slots_per_gpu);
  const std::int64_t tile = cost.moe_tile(gpu, n, slots_per_gpu);
  // Even spread: `extra` experts get one token more than the others.
  const std::int64_t base = n / active;
  const std::int64_t extra = n % active;
  const std::int64_t padded =
      extra * hardware::pad_to_tile(base + 1, tile) + (active - extra) * hardware::pad_to_tile(base, tile);
  return cost.kernel_ns(gpu, models::expert_ffn_work(model, static_cast<double>(padded), static_cast<double>(n),
                                                     static_cast<double>(active)));
}

std::shared_ptr<const policies::CostCurves> make_cost_curves(const models::ModelSpec& model,
                                                             const hardware::CostModel& cost, int gpu_offset, int gpus,
                                                             int slots_per_gpu, const policies::CostProfileConfig& cfg,
                                                             const core::RandomStreams& streams) {
  if (cfg.mode == policies::CostProfileMode::exact) {
    const hardware::CostModel* c = &cost;
    return std::make_shared<const policies::CostCurves>(
        gpus, [model, c, gpu_offset, slots_per_gpu](int g, double tokens) {
          return expert_layer_ns(model, *c, gpu_offset + g, tokens, slots_per_gpu);
        });
  }
  std::vector<std::vector<double>> tokens(static_cast<std::size_t>(gpus));
  std::vector<std::vector<double>> ns(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) {
    // Sample points: 1, 2, 4, ... while experts are still being activated (the weight-loading part of
    // the curve grows with every expert), both sides of the switch to the large tile, then both edges of
    // every tile boundary of the evenly spread call (at k x tile x slots every expert's padding has just
    // been filled; by then + slots every expert has started a new tile: the step between them is the
    // staircase's riser), then sparse.
    std::vector<std::int64_t> points;
    for (std::int64_t n = 1; n < slots_per_gpu; n *= 2) {
      points.push_back(n);
    }
    points.push_back(slots_per_gpu);
    points.push_back(slots_per_gpu + 1);
    const std::int64_t step =
        std::max<std::int64_t>(1, cost.moe_tile(gpu_offset + g, cfg.dense_until_tokens, slots_per_gpu)) * slots_per_gpu;
    for (std::int64_t n = step; n <= cfg.dense_until_tokens; n += step) {
      points.push_back(n);
      if (n + slots_per_gpu <= cfg.dense_until_tokens) {
        points.push_back(n + slots_per_gpu);
      }
    }
    for (std::int64_t n = cfg.dense_until_tokens + cfg.sparse_interval_tokens; n <= cfg.max_tokens;
         n += cfg.sparse_interval_tokens) {
      points.push_back(n);
    }
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    core::Rng rng =
        streams.stream("cost_profile", static_cast<std::uint64_t>(gpu_offset) + static_cast<std::uint64_t>(g));
    boost::random::normal_distribution<double> noise(0.0, 1.0);
    for (const std::int64_t n : points) {
      const double truth = expert_layer_ns(model, cost, gpu_offset + g, static_cast<double>(n), slots_per_gpu);
      const double err = cfg.noise_cv > 0.0 ? cfg.noise_cv * noise(rng) : 0.0;
      tokens[static_cast<std::size_t>(g)].push_back(static_cast<double>(n));
      ns[static_cast<std::size_t>(g)].push_back(std::max(0.0, truth * (1.0 + err)));
    }
  }
  return std::make_shared<const policies::CostCurves>(std::move(tokens), std::move(ns));
}

}  // namespace epsim::serving
