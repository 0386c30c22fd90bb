// SPDX-License-Identifier: Apache-2.0
#include "policies/replicated_placement.hpp"

#include <string>

#include "core/error.hpp"

namespace epsim::policies {

Placement ReplicatedPlacement::place(const PlacementInput& in) {
  const int slots = in.num_gpus * in.slots_per_gpu;
  if (in.num_gpus < 1 || in.num_experts < 1 || slots < in.num_experts) {
    throw core::Error("replicated placement: " + std::to_string(slots) + " slots cannot hold all " +
                      std::to_string(in.num_experts) + " experts");
  }
  std::vector<int> phy2log(static_cast<std::size_t>(slots));
  for (int s = 0; s < slots; ++s) {
    phy2log[static_cast<std::size_t>(s)] = s % in.num_experts;
  }
  Placement p;
  const LayerPlacement layer = make_layer_placement(in.num_experts, in.num_gpus, in.slots_per_gpu, std::move(phy2log));
  p.layers.assign(static_cast<std::size_t>(in.num_layers), layer);
  return p;
}

}  // namespace epsim::policies
