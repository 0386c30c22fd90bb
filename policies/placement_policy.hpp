#pragma once
// Which replicas of which experts live on which GPU, for every MoE layer (DESIGN.md 6). A policy sees
// plain inputs only, never the simulator, so `epsim place` can call it for a real deployment.
#include <string_view>

#include "policies/placement.hpp"

namespace epsim::policies {

struct PlacementInput {
  int num_layers = 0;     ///< MoE layers
  int num_experts = 0;    ///< logical experts per layer
  int num_gpus = 0;       ///< GPUs of the EP group
  int num_nodes = 1;      ///< nodes the EP group spans
  int slots_per_gpu = 0;  ///< physical expert slots per GPU (num_gpus * slots_per_gpu >= num_experts)
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual Placement place(const PlacementInput& in) = 0;
};

}  // namespace epsim::policies
