#pragma once
// `epsim cost`: the per-layer cost curve of a model on a GPU (tokens -> microseconds, and which roofline
// bound is active), so users can inspect the cost model before trusting a simulation.
#include <cstdint>
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"

namespace epsim::experiments {

struct CostTableOptions {
  std::vector<std::int64_t> tokens;  ///< token counts (rows)
  std::int64_t experts_active = 0;   ///< activated experts on the GPU (0 = min(tokens, local experts))
  std::int64_t local_experts = 0;    ///< experts resident on the GPU (0 = routed / 8)
  std::int64_t context = 1024;       ///< cached tokens behind each decode token
  double speed = 1.0;                ///< the GPU's speed factor
  bool csv = false;
};

std::string cost_table(const models::ModelSpec& model, const hardware::GpuSpec& gpu, const CostTableOptions& o);

}  // namespace epsim::experiments
