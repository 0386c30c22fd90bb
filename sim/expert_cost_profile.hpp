// SPDX-License-Identifier: Apache-2.0
#pragma once
// The cost curves C_g(n) the placement policies see (policies/cost_curves.hpp), taken from the
// simulator's own cost model the way GEM profiles real GPUs (paper 000, Section 3.3.2): one MoE layer's
// expert computation is timed at selected token counts (densely at kernel tile boundaries, sparsely at
// high counts), each sample with measurement noise, and the policies interpolate linearly between them.
// The profile is taken once, at time 0: when speeds drift later, policies act on a stale profile, as
// they would in a deployment. The "exact" mode hands them the cost model itself instead. With
// activation_aware (the default) the profile has a row per activated-expert count 1 .. slots:
// C_g(n, a), which is what a grouped GEMM's time depends on; the top row is the token-only C_g(n).
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "core/random_streams.hpp"
#include "hardware/cost_model.hpp"
#include "models/model_spec.hpp"
#include "policies/cost_curves.hpp"
#include "policies/cost_profile.hpp"

namespace epsim::serving {

/// The simulator's C_g(n, a): `tokens` token-expert pairs spread evenly over min(tokens, activated,
/// slots_per_gpu) local experts, each expert's share padded to the GPU's grouped-GEMM tile (as the step
/// executor does). A fractional `activated` (an expectation) interpolates linearly between its neighbours.
double expert_layer_ns(const models::ModelSpec& model, const hardware::CostModel& cost, int gpu, double tokens,
                       int slots_per_gpu, double activated = std::numeric_limits<double>::infinity());

/// Curves for GPUs gpu_offset .. gpu_offset + gpus - 1 (indexed 0 .. gpus - 1). In exact mode the curves
/// keep a pointer to `cost`, which must outlive them.
std::shared_ptr<const policies::CostCurves> make_cost_curves(const models::ModelSpec& model,
                                                             const hardware::CostModel& cost, int gpu_offset, int gpus,
                                                             int slots_per_gpu, const policies::CostProfileConfig& cfg,
                                                             const core::RandomStreams& streams);

}  // namespace epsim::serving
