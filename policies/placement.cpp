// SPDX-License-Identifier: Apache-2.0
#include "policies/placement.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace epsim::policies {

LayerPlacement make_layer_placement(int num_experts, int num_gpus, int slots_per_gpu, std::vector<int> phy2log) {
  LayerPlacement p;
  p.num_experts = num_experts;
  p.num_gpus = num_gpus;
  p.slots_per_gpu = slots_per_gpu;
  if (static_cast<int>(phy2log.size()) != num_gpus * slots_per_gpu) {
    throw core::Error("placement: phy2log has " + std::to_string(phy2log.size()) + " slots, expected " +
                      std::to_string(num_gpus * slots_per_gpu));
  }
  p.logcnt.assign(static_cast<std::size_t>(num_experts), 0);
  for (const int e : phy2log) {
    if (e < -1 || e >= num_experts) {
      throw core::Error("placement: expert id " + std::to_string(e) + " out of range [0, " +
                        std::to_string(num_experts) + ")");
    }
    if (e >= 0) {
      ++p.logcnt[static_cast<std::size_t>(e)];
    }
  }
  for (int e = 0; e < num_experts; ++e) {
    if (p.logcnt[static_cast<std::size_t>(e)] == 0) {
      throw core::Error("placement: expert " + std::to_string(e) + " has no replica");
    }
  }
  p.max_replicas = *std::max_element(p.logcnt.begin(), p.logcnt.end());
  p.log2phy.assign(static_cast<std::size_t>(num_experts) * static_cast<std::size_t>(p.max_replicas), -1);
  std::vector<int> filled(static_cast<std::size_t>(num_experts), 0);
  for (int s = 0; s < static_cast<int>(phy2log.size()); ++s) {
    const int e = phy2log[static_cast<std::size_t>(s)];
    if (e >= 0) {
      const auto rank = static_cast<std::size_t>(filled[static_cast<std::size_t>(e)]++);
      p.log2phy[static_cast<std::size_t>(e) * static_cast<std::size_t>(p.max_replicas) + rank] = s;
    }
  }
  p.phy2log = std::move(phy2log);
  return p;
}

LayerPlacement make_layer_placement(int num_experts, int num_gpus, int slots_per_gpu, std::vector<int> phy2log,
                                    const std::vector<int>& rank) {
  LayerPlacement p = make_layer_placement(num_experts, num_gpus, slots_per_gpu, std::move(phy2log));
  std::fill(p.log2phy.begin(), p.log2phy.end(), -1);
  for (int s = 0; s < p.num_slots(); ++s) {
    const int e = p.phy2log[static_cast<std::size_t>(s)];
    if (e < 0) {
      continue;
    }
    const int r = rank[static_cast<std::size_t>(s)];
    if (r < 0 || r >= p.logcnt[static_cast<std::size_t>(e)]) {
      throw core::Error("placement: slot " + std::to_string(s) + " has replica rank " + std::to_string(r) +
                        " out of range for expert " + std::to_string(e));
    }
    int& at =
        p.log2phy[static_cast<std::size_t>(e) * static_cast<std::size_t>(p.max_replicas) + static_cast<std::size_t>(r)];
    if (at >= 0) {
      throw core::Error("placement: expert " + std::to_string(e) + " has two replicas of rank " + std::to_string(r));
    }
    at = s;
  }
  return p;
}

}  // namespace epsim::policies
