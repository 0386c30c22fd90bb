// SPDX-License-Identifier: Apache-2.0
#include "policies/load_window.hpp"

#include <array>

namespace epsim::policies {

LoadWindowConfig parse_load_window(core::ParamTable& policy) {
  static constexpr std::array<core::Choice<LoadWindowSource>, 2> k_sources{
      {{"warmup", LoadWindowSource::warmup}, {"synthetic", LoadWindowSource::synthetic}}};
  LoadWindowConfig c;
  c.steps = policy.integer("load_window_steps", 32,
                           "steps of routing (the trace's first, or synthetic) a load-aware policy sees", {1, 1 << 24});
  c.tokens = policy.integer("load_window_tokens", 512, "synthetic load window: tokens per step", {1, 1 << 24});
  c.source = policy.choice<LoadWindowSource>(
      "load_window", LoadWindowSource::warmup,
      "synthetic routing: warmup = record real steps served with the linear placement (GEM's step 1); synthetic = "
      "steps of load_window_tokens tokens from a router of its own",
      k_sources);
  c.skip_steps = policy.integer("load_window_skip_steps", 100, "warmup: ramp-up steps not recorded", {0, 1 << 24});
  return c;
}

}  // namespace epsim::policies
