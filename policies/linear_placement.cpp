// SPDX-License-Identifier: Apache-2.0
#include "policies/linear_placement.hpp"

#include <algorithm>
#include <cstdint>

#include <string>

#include "core/error.hpp"

namespace epsim::policies {

Placement LinearPlacement::place(const PlacementInput& in) {
  if (in.num_gpus < 1 || in.num_experts < in.num_gpus) {
    throw core::Error("linear placement: " + std::to_string(in.num_experts) + " experts cannot cover " +
                      std::to_string(in.num_gpus) + " GPUs");
  }
  // GPU floor(e / (E / N)) = floor(e * N / E) in exact integer arithmetic; with E % N != 0 some GPUs hold
  // one expert more. Each expert takes the GPU's next free slot.
  const auto gpu_of = [&](int e) {
    return static_cast<int>(static_cast<std::int64_t>(e) * in.num_gpus / in.num_experts);
  };
  std::vector<int> used(static_cast<std::size_t>(in.num_gpus), 0);
  for (int e = 0; e < in.num_experts; ++e) {
    ++used[static_cast<std::size_t>(gpu_of(e))];
  }
  const int most = *std::max_element(used.begin(), used.end());
  if (in.slots_per_gpu < most) {
    throw core::Error("linear placement: " + std::to_string(most) + " experts on a GPU need that many slots, got " +
                      std::to_string(in.slots_per_gpu));
  }
  std::fill(used.begin(), used.end(), 0);
  std::vector<int> phy2log(static_cast<std::size_t>(in.num_gpus) * static_cast<std::size_t>(in.slots_per_gpu), -1);
  for (int e = 0; e < in.num_experts; ++e) {
    const int gpu = gpu_of(e);
    phy2log[static_cast<std::size_t>(gpu) * static_cast<std::size_t>(in.slots_per_gpu) +
            static_cast<std::size_t>(used[static_cast<std::size_t>(gpu)]++)] = e;
  }
  Placement p;
  const LayerPlacement layer = make_layer_placement(in.num_experts, in.num_gpus, in.slots_per_gpu, std::move(phy2log));
  p.layers.assign(static_cast<std::size_t>(in.num_layers), layer);
  return p;
}

}  // namespace epsim::policies
