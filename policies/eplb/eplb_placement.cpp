// SPDX-License-Identifier: Apache-2.0
#include "policies/eplb/eplb_placement.hpp"

#include "core/error.hpp"
#include "policies/eplb/biased_eplb.hpp"
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
  const std::vector<double> weight = in.load_window().total();
  const int slots = in.num_gpus * in.slots_per_gpu;
  if (variant_ == EplbVariant::biased) {
    std::vector<int> phy2log;
    std::vector<int> rank;
    phy2log.reserve(static_cast<std::size_t>(in.num_layers) * static_cast<std::size_t>(slots));
    rank.reserve(phy2log.capacity());
    std::vector<float> w(static_cast<std::size_t>(in.num_experts));
    std::vector<int> layer_phy2log;
    std::vector<int> layer_rank;
    for (int l = 0; l < in.num_layers; ++l) {
      for (int e = 0; e < in.num_experts; ++e) {
        w[static_cast<std::size_t>(e)] =
            static_cast<float>(weight[static_cast<std::size_t>(l) * static_cast<std::size_t>(in.num_experts) +
                                      static_cast<std::size_t>(e)]);
      }
      eplb::biased_layer(w, slots, in.num_gpus, layer_phy2log, layer_rank);
      phy2log.insert(phy2log.end(), layer_phy2log.begin(), layer_phy2log.end());
      rank.insert(rank.end(), layer_rank.begin(), layer_rank.end());
    }
    return placement_from_eplb(in, phy2log, rank);
  }
  const eplb::Result r = eplb::rebalance_experts(weight, in.num_layers, in.num_experts, slots, in.num_groups,
                                                 in.num_nodes, in.num_gpus, variant_ == EplbVariant::distinct_per_gpu);
  return placement_from_eplb(in, r.phy2log, r.phyrank);
}

}  // namespace epsim::policies
