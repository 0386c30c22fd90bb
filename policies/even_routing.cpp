// SPDX-License-Identifier: Apache-2.0
#include "policies/even_routing.hpp"

#include <algorithm>

namespace epsim::policies {

void EvenRouting::route(const StepLayerLoad& load, const LayerPlacement& placement, RoutedLoad& out) {
  out.per_origin = false;
  out.all_gather_dispatch = false;
  if (placement.max_replicas == 1 && placement.num_slots() == placement.num_experts) {
    // One replica an expert and no empty slot: slots and experts are in bijection, so routing is a gather
    // (no clearing, no per-expert span).
    for (std::size_t s = 0; s < out.slot_tokens.size(); ++s) {
      out.slot_tokens[s] = load.expert_tokens[static_cast<std::size_t>(placement.phy2log[s])];
    }
    return;
  }
  std::fill(out.slot_tokens.begin(), out.slot_tokens.end(), 0);
  for (int e = 0; e < placement.num_experts; ++e) {
    const std::int32_t n = load.expert_tokens[static_cast<std::size_t>(e)];
    const std::span<const int> slots = placement.replicas(e);
    const auto c = static_cast<std::int32_t>(slots.size());
    if (c == 1) {  // most experts: no division
      out.slot_tokens[static_cast<std::size_t>(slots[0])] = n;
      continue;
    }
    const std::int32_t base = n / c;
    const std::int32_t extra = n % c;
    for (std::int32_t r = 0; r < c; ++r) {
      out.slot_tokens[static_cast<std::size_t>(slots[static_cast<std::size_t>(r)])] = base + (r < extra ? 1 : 0);
    }
  }
}

}  // namespace epsim::policies
