// SPDX-License-Identifier: Apache-2.0
#pragma once
// For one step and MoE layer: split each logical expert's tokens over its replicas. The
// output buffer is owned by the caller and reused every step, so routing never allocates.
#include <cstdint>
#include <span>
#include <vector>

#include "policies/placement.hpp"
#include "policies/policy_needs.hpp"

namespace epsim::policies {

struct StepLayerLoad {
  std::span<const std::int32_t> expert_tokens;  ///< token-expert assignments per logical expert
  // The step's phase, for policies that route prefill and decode differently (metro): a decode step
  // has prefill_tokens == 0 and decode_tokens > 0.
  std::int64_t prefill_tokens = 0;  ///< prefill tokens in the step's batch
  std::int64_t decode_tokens = 0;   ///< decode tokens in the step's batch
  /// Where the tokens come from (GRACE's locality tiers): [origin_gpu][expert] row-major token-expert
  /// assignments, summing over origins to expert_tokens. Empty when unknown.
  std::span<const std::int32_t> origin_tokens = {};
  int gpus_per_node = 0;  ///< GPUs per node of the EP group; 0 when unknown (one node)
};

struct RoutedLoad {
  std::vector<std::int32_t> slot_tokens;  ///< tokens per physical slot (gpu-major)
  /// Set by every route(): true when the step's dispatch is an all-gather of the tokens' hidden states
  /// (metro needs every GPU to see every token's top-k), false for the usual all-to-all.
  bool all_gather_dispatch = false;
  /// Set by every route(): true when the policy chose destinations per origin GPU (GRACE's locality
  /// tiers) and wrote them to origin_gpu_tokens, [origin][gpu] token-expert pairs, which then decide the
  /// dispatch traffic; false: each origin's tokens follow its experts' overall split.
  bool per_origin = false;
  std::vector<std::int32_t> origin_gpu_tokens = {};
};

class RoutingPolicy {
 public:
  virtual ~RoutingPolicy() = default;
  /// Writes out.slot_tokens (already sized to placement.num_slots()) and out.all_gather_dispatch.
  virtual void route(const StepLayerLoad& load, const LayerPlacement& placement, RoutedLoad& out) = 0;
  /// origins: route() uses StepLayerLoad::origin_tokens (the engine then derives them when the routing
  /// source has none: each GPU's share of the step's tokens).
  virtual PolicyNeeds needs() const { return {}; }
};

}  // namespace epsim::policies
