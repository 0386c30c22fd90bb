// SPDX-License-Identifier: Apache-2.0
#pragma once
// EPLB as a placement policy: DeepSeek's rebalance_experts on the load window, with the EP group's GPUs
// as num_gpus, its nodes as num_nodes, all its slots as num_replicas and the model's expert groups.
#include "policies/placement_policy.hpp"

namespace epsim::policies {

class EplbPlacement final : public PlacementPolicy {
 public:
  /// `distinct_per_gpu`: the distinct variant (eplb.hpp), at most one replica of an expert per GPU.
  explicit EplbPlacement(bool distinct_per_gpu = false) : distinct_(distinct_per_gpu) {}
  Placement place(const PlacementInput& in) override;
  PolicyNeeds needs() const override { return {.load_window = true}; }

 private:
  bool distinct_;
};

/// A Placement from an EPLB result (phy2log and replica ranks per layer).
Placement placement_from_eplb(const PlacementInput& in, const std::vector<int>& phy2log, const std::vector<int>& rank);

}  // namespace epsim::policies
