// SPDX-License-Identifier: Apache-2.0
#pragma once
// What a placement change moves: for every slot whose expert changes, the expert's weights travel from a
// GPU that held it before (one on the same node if any, else the lowest-numbered) unless the destination
// GPU already held that expert in another slot (a local copy, no transfer).
#include <cstdint>
#include <vector>

#include "policies/placement.hpp"

namespace epsim::policies {

struct ExpertMove {
  int layer = 0;
  int expert = 0;
  int from_gpu = 0;  ///< GPU index inside the EP group
  int to_gpu = 0;
};

/// Moves from `before` to `after` (same shapes); `gpus_per_node` decides which sources are near.
std::vector<ExpertMove> plan_migration(const Placement& before, const Placement& after, int gpus_per_node);

}  // namespace epsim::policies
