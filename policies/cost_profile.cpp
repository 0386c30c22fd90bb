// SPDX-License-Identifier: Apache-2.0
#include "policies/cost_profile.hpp"

#include <array>

namespace epsim::policies {

CostProfileConfig parse_cost_profile(core::ParamTable& t) {
  static constexpr std::array<core::Choice<CostProfileMode>, 2> k_modes{
      {{"profiled", CostProfileMode::profiled}, {"exact", CostProfileMode::exact}}};
  CostProfileConfig c;
  c.mode = t.choice<CostProfileMode>("mode", CostProfileMode::profiled,
                                     "profiled = sampled at tile boundaries with noise at time 0, interpolated (GEM's "
                                     "method); exact = the simulator's own cost model",
                                     k_modes);
  c.noise_cv = t.real("noise_cv", 0.01, "relative std of each profile sample's error", {0.0, 1.0});
  c.dense_until_tokens = t.integer("dense_until_tokens", 8192,
                                   "sample every tile boundary up to this many tokens per GPU", {1, 1LL << 30});
  c.sparse_interval_tokens =
      t.integer("sparse_interval_tokens", 2048, "then sample every this many tokens", {1, 1LL << 30});
  c.max_tokens = t.integer("max_tokens", 65536, "last sampled token count (beyond: linear)", {1, 1LL << 40});
  c.activation_aware = t.boolean("activation_aware", true,
                                 "profile C_g(n, a): rows at 1, 2, 4, ... activated experts (false: C_g(n) with "
                                 "every held expert activated, the papers' token-only curve)");
  t.finish();
  return c;
}

}  // namespace epsim::policies
