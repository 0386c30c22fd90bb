// SPDX-License-Identifier: Apache-2.0
#pragma once
// The load window a load-aware policy sees before the run ([policy] load_window*): the routing of the
// trace's first steps, of real steps served with the linear placement (a warm-up run, GEM's step 1),
// or of synthetic steps of a fixed size. experiments/ profiles it; policies read PlacementInput.
#include <cstdint>

#include "core/params.hpp"

namespace epsim::policies {

enum class LoadWindowSource : std::uint8_t {
  warmup,     ///< synthetic routing: real steps of a run with the linear placement, after its ramp-up
  synthetic,  ///< synthetic routing: steps of `tokens` tokens from a router of its own
};

struct LoadWindowConfig {
  std::int64_t steps = 32;    ///< steps of routing the window holds (a trace's first, or profiled)
  std::int64_t tokens = 512;  ///< synthetic: tokens per step
  LoadWindowSource source = LoadWindowSource::warmup;
  std::int64_t skip_steps = 100;  ///< warmup: ramp-up steps not recorded
};

/// Reads the load-window keys of [policy] (the caller finishes the table).
LoadWindowConfig parse_load_window(core::ParamTable& policy);

}  // namespace epsim::policies
