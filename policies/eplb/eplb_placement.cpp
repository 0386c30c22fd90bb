// SPDX-License-Identifier: Apache-2.0
#include "policies/eplb/eplb_placement.hpp"

#include "core/error.hpp"
#include "policies/eplb/eplb.hpp"

namespace epsim::policies {

Placement placement_from_eplb(const PlacementInput& in, const std::vector<int>& phy2log, const std::vector<int>& rank) {
  Placement p;
  const int slots = in.num_gpus * in.slots_per_gpu;
  for (int l = 0; l < in.num_layers; ++l) {
    const auto first = static_cast<std::ptrdiff_t>(l) * slots;
    p.layers.push_back(make_layer_placement(in.num_experts, in.num_gpus, in.slots_per_gpu,
                                            std::vector<int>(phy2log.begin() + first, phy2log.begin() + first + slots),
                                            std::vector<int>(rank.begin() + first, rank.begin() + first + slots)));
  }
  return p;
}

Placement EplbPlacement::place(const PlacementInput& in) {
  const eplb::Result r =
      eplb::rebalance_experts(in.load_window().total(), in.num_layers, in.num_experts, in.num_gpus * in.slots_per_gpu,
                              in.num_groups, in.num_nodes, in.num_gpus, distinct_);
  return placement_from_eplb(in, r.phy2log, r.phyrank);
}

}  // namespace epsim::policies
