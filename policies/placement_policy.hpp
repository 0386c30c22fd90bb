#pragma once
// Which replicas of which experts live on which GPU, for every MoE layer (DESIGN.md 6). A policy sees
// plain inputs only, never the simulator, so `epsim place` can call it for a real deployment.
#include <string_view>
#include <vector>

#include "policies/placement.hpp"

namespace epsim::policies {

struct PlacementInput {
  int num_layers = 0;     ///< MoE layers
  int num_experts = 0;    ///< logical experts per layer
  int num_gpus = 0;       ///< GPUs of the EP group
  int num_nodes = 1;      ///< nodes the EP group spans
  int slots_per_gpu = 0;  ///< physical expert slots per GPU (num_gpus * slots_per_gpu >= num_experts)
  int num_groups = 1;     ///< expert groups (DeepSeek's n_group) for group-aware policies
  /// Tokens per expert over a load window, [layer][expert] row-major (empty when not profiled).
  std::vector<double> expert_load;
};

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual Placement place(const PlacementInput& in) = 0;
  /// Whether place() needs PlacementInput::expert_load.
  virtual bool needs_load() const { return false; }
};

}  // namespace epsim::policies
