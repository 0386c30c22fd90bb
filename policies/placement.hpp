// SPDX-License-Identifier: Apache-2.0
#pragma once
// Where expert replicas live: per MoE layer, phy2log[slot] for every physical slot (gpu-major: slot s
// is on GPU s / slots_per_gpu), and the derived log2phy / logcnt, with the meanings of DeepSeek's EPLB.
#include <span>
#include <vector>

namespace epsim::policies {

struct LayerPlacement {
  int num_experts = 0;
  int num_gpus = 0;
  int slots_per_gpu = 0;
  int max_replicas = 0;      ///< width of a log2phy row
  std::vector<int> phy2log;  ///< [gpu * slots_per_gpu + slot] -> logical expert, -1 = empty slot
  std::vector<int> logcnt;   ///< [expert] -> number of replicas (>= 1)
  std::vector<int> log2phy;  ///< [expert * max_replicas + rank] -> physical slot, -1 padded

  int num_slots() const { return num_gpus * slots_per_gpu; }
  int gpu_of_slot(int slot) const { return slot / slots_per_gpu; }
  /// Physical slots holding expert `e`, in replica-rank order.
  std::span<const int> replicas(int e) const {
    return {log2phy.data() + static_cast<std::size_t>(e) * static_cast<std::size_t>(max_replicas),
            static_cast<std::size_t>(logcnt[static_cast<std::size_t>(e)])};
  }
};

/// Builds a layer placement from phy2log; replica ranks follow slot order. Throws core::Error if an
/// expert has no replica or an id is out of range.
LayerPlacement make_layer_placement(int num_experts, int num_gpus, int slots_per_gpu, std::vector<int> phy2log);
/// The same with each slot's replica rank given (EPLB orders replicas by creation, not by slot).
LayerPlacement make_layer_placement(int num_experts, int num_gpus, int slots_per_gpu, std::vector<int> phy2log,
                                    const std::vector<int>& rank);

struct Placement {
  std::vector<LayerPlacement> layers;  ///< one per MoE layer
};

}  // namespace epsim::policies
