#pragma once
// `epsim cost`: the per-layer cost curve of a model on a GPU (tokens -> microseconds, and which roofline
// bound is active), so users can inspect the cost model before trusting a simulation.
#include <cstdint>
#include <string>
#include <vector>

#include "hardware/roofline.hpp"
#include "models/model_spec.hpp"

namespace epsim::experiments {

struct CostTableOptions {
  std::vector<std::int64_t> tokens;  ///< token counts (rows)
  std::int64_t experts_active = 0;   ///< activated experts on the GPU (0 = min(tokens, local experts))
  std::int64_t local_experts = 0;    ///< experts resident on the GPU (0 = routed / 8)
  std::int64_t context = 1024;       ///< cached tokens behind each decode token
  bool csv = false;
};

/// The table of GPU `gpu` of `cost` (its model, speed and stress weighting as a run sees them).
std::string cost_table(const models::ModelSpec& model, const hardware::RooflineCostModel& cost, int gpu,
                       const CostTableOptions& o);

}  // namespace epsim::experiments
