#include "policies/linear_placement.hpp"

#include <string>

#include "sim/core/error.hpp"

namespace epsim::policies {

Placement LinearPlacement::place(const PlacementInput& in) {
  if (in.num_gpus < 1 || in.num_experts % in.num_gpus != 0) {
    throw core::Error("linear placement: " + std::to_string(in.num_experts) + " experts do not divide evenly over " +
                      std::to_string(in.num_gpus) + " GPUs");
  }
  const int per_gpu = in.num_experts / in.num_gpus;
  if (in.slots_per_gpu < per_gpu) {
    throw core::Error("linear placement: " + std::to_string(per_gpu) + " experts per GPU need that many slots, got " +
                      std::to_string(in.slots_per_gpu));
  }
  std::vector<int> phy2log(static_cast<std::size_t>(in.num_gpus) * static_cast<std::size_t>(in.slots_per_gpu), -1);
  for (int e = 0; e < in.num_experts; ++e) {
    const int gpu = e / per_gpu;
    phy2log[static_cast<std::size_t>(gpu) * static_cast<std::size_t>(in.slots_per_gpu) +
            static_cast<std::size_t>(e % per_gpu)] = e;
  }
  Placement p;
  const LayerPlacement layer = make_layer_placement(in.num_experts, in.num_gpus, in.slots_per_gpu, std::move(phy2log));
  p.layers.assign(static_cast<std::size_t>(in.num_layers), layer);
  return p;
}

}  // namespace epsim::policies
