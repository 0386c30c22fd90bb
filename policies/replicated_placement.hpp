// SPDX-License-Identifier: Apache-2.0
#pragma once
// Uniform replication, load-blind: slot s of the EP group (gpu-major) holds expert s mod E, so every GPU
// holds experts and every expert ceil or floor(R / E) copies. The placement that exists at every EP size,
// even with fewer experts than GPUs (where linear cannot): the warm-up run's when linear cannot cover the
// GPUs, and a baseline for EP sizes past the expert count.
#include "policies/placement_policy.hpp"

namespace epsim::policies {

class ReplicatedPlacement final : public PlacementPolicy {
 public:
  Placement place(const PlacementInput& in) override;
};

}  // namespace epsim::policies
