// SPDX-License-Identifier: Apache-2.0
#pragma once
// How the cost curves C_g(n) that load-aware policies see are taken ([policy.cost_profile]): sampled
// from the cost model like GEM profiles a GPU (noisy, interpolated), or the cost model itself.
// sim/expert_cost_profile.hpp takes them.
#include <cstdint>

#include "core/params.hpp"

namespace epsim::policies {

enum class CostProfileMode : std::uint8_t {
  profiled,  ///< sampled at tile boundaries with noise at time 0, interpolated (GEM's method)
  exact,     ///< the simulator's own cost model
};

struct CostProfileConfig {
  CostProfileMode mode = CostProfileMode::profiled;
  double noise_cv = 0.01;  ///< relative std of each sample's measurement error
  /// Samples at every tile boundary (tile x slots tokens apart) up to here, then every
  /// `sparse_interval_tokens` up to `max_tokens`; beyond, the last segment's slope continues.
  std::int64_t dense_until_tokens = 8192;
  std::int64_t sparse_interval_tokens = 2048;
  std::int64_t max_tokens = 65536;
  /// Profile C_g(n, a) at activated-expert counts 1, 2, 4, ... up to the GPU's slots (rows the policies
  /// interpolate between) instead of C_g(n) with every held expert activated.
  bool activation_aware = true;
};

/// Reads [policy.cost_profile] and finishes it.
CostProfileConfig parse_cost_profile(core::ParamTable& t);

}  // namespace epsim::policies
