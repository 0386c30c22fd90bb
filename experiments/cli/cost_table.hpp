// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim cost`: the per-layer cost curve of a model on a GPU (tokens -> microseconds, and which roofline
// bound is active), so users can inspect the cost model before trusting a simulation.
// Experts: a row's n tokens are token-expert pairs on the GPU, each landing on one of its `local`
// experts uniformly at random, so by default E[active] = local x (1 - (1 - 1/local)^n) experts are
// active (a real number). An approximation: every active expert gets the expected share n / active,
// rounded up and padded to the tile, so padded tokens = active x pad(ceil(n / active)); the weights of
// E[active] experts are read. An explicit active count splits the n tokens exactly instead.
// The other columns price n tokens through one MoE layer: the attention cores (prefill: one causal
// sequence of n; decode: n tokens over `context` each), the projections, the shared experts and router,
// and the elementwise kernels (models/layer_work.hpp; priced whether or not the model turns them on).
#include <cstdint>
#include <string>
#include <vector>

#include "hardware/cost_model.hpp"
#include "hardware/gpu_spec.hpp"
#include "models/model_spec.hpp"

namespace epsim::experiments {

struct CostTableOptions {
  std::vector<std::int64_t> tokens;  ///< token counts (rows)
  std::int64_t experts_active = 0;   ///< activated experts on the GPU (0 = expected under uniform routing)
  std::int64_t local_experts = 0;    ///< experts resident on the GPU (0 = routed / 8)
  std::int64_t context = 1024;       ///< cached tokens behind each decode token
  bool masked_layout = false;        ///< DeepEP low-latency kernels: the elementwise work has no permutation
  bool csv = false;
};

/// Expected experts of `local` that receive at least one of `pairs` token-expert pairs, each on one
/// expert uniformly at random: local x (1 - (1 - 1/local)^pairs).
double expected_active_local(std::int64_t local, std::int64_t pairs);

/// The table of GPU `gpu` of `cost` (its model, speed and stress weighting as a run sees them): times
/// from cost.kernel_ns, the bound from `spec`'s roofline; `speed` is the factor the header shows.
std::string cost_table(const models::ModelSpec& model, const hardware::CostModel& cost, const hardware::GpuSpec& spec,
                       int gpu, double speed, const CostTableOptions& o);

}  // namespace epsim::experiments
