// SPDX-License-Identifier: Apache-2.0
#pragma once
// EPLB as a placement policy: DeepSeek's rebalance_experts on the load window, with the EP group's GPUs
// as num_gpus, its nodes as num_nodes, all its slots as num_replicas and the model's expert groups; or
// ATOM's biased variant (biased_eplb.hpp).
#include <cstdint>

#include "policies/placement_policy.hpp"

namespace epsim::policies {

enum class EplbVariant : std::uint8_t {
  reference,         ///< DeepSeek's rebalance_experts
  distinct_per_gpu,  ///< its distinct variant (eplb.hpp): at most one replica of an expert per GPU
  biased,            ///< ATOM's: the hottest experts on every GPU, the rest by the reference's steps
};

class EplbPlacement final : public PlacementPolicy {
 public:
  explicit EplbPlacement(EplbVariant variant = EplbVariant::reference) : variant_(variant) {}
  Placement place(const PlacementInput& in) override;
  PolicyNeeds needs() const override { return {.load_window = true}; }

 private:
  EplbVariant variant_;
};

/// A Placement from an EPLB result (phy2log and replica ranks per layer).
Placement placement_from_eplb(const PlacementInput& in, const std::vector<int>& phy2log, const std::vector<int>& rank);

}  // namespace epsim::policies
