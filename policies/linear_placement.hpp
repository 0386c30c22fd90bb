// SPDX-License-Identifier: Apache-2.0
#pragma once
// vLLM's default placement: contiguous blocks, logical expert e of E on N GPUs goes to GPU
// floor(e / (E / N)), no redundancy; when N does not divide E some GPUs hold one expert more, and slots
// beyond a GPU's experts stay empty.
#include "policies/placement_policy.hpp"

namespace epsim::policies {

class LinearPlacement final : public PlacementPolicy {
 public:
  Placement place(const PlacementInput& in) override;
};

}  // namespace epsim::policies
