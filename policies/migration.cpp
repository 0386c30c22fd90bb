// SPDX-License-Identifier: Apache-2.0
#include "policies/migration.hpp"

#include <algorithm>

namespace epsim::policies {

std::vector<ExpertMove> plan_migration(const Placement& before, const Placement& after, int gpus_per_node) {
  std::vector<ExpertMove> moves;
  for (std::size_t l = 0; l < after.layers.size(); ++l) {
    const LayerPlacement& old_layer = before.layers[l];
    const LayerPlacement& new_layer = after.layers[l];
    const int slots = new_layer.slots_per_gpu;
    for (int g = 0; g < new_layer.num_gpus; ++g) {
      const auto held_before = [&](int gpu, int e) {
        const auto first = old_layer.phy2log.begin() + static_cast<std::ptrdiff_t>(gpu) * slots;
        return std::find(first, first + slots, e) != first + slots;
      };
      for (int s = g * slots; s < (g + 1) * slots; ++s) {
        const int e = new_layer.phy2log[static_cast<std::size_t>(s)];
        if (e < 0 || held_before(g, e)) {
          continue;  // empty slot, or the GPU already has the weights
        }
        // A source: a GPU of the same node that held e, else the lowest-numbered one.
        int from = -1;
        for (const int src_slot : old_layer.replicas(e)) {
          const int src = old_layer.gpu_of_slot(src_slot);
          if (from < 0 || (src / gpus_per_node == g / gpus_per_node && from / gpus_per_node != g / gpus_per_node)) {
            from = src;
          }
        }
        moves.push_back(ExpertMove{static_cast<int>(l), e, from, g});
      }
    }
  }
  return moves;
}

}  // namespace epsim::policies
