#pragma once
// For one step and MoE layer: split each logical expert's tokens over its replicas (DESIGN.md 6). The
// output buffer is owned by the caller and reused every step, so routing never allocates.
#include <cstdint>
#include <span>
#include <vector>

#include "policies/placement.hpp"

namespace epsim::policies {

struct StepLayerLoad {
  std::span<const std::int32_t> expert_tokens;  ///< token-expert assignments per logical expert
  // The step's phase, for policies that route prefill and decode differently (metro): a decode step
  // has prefill_tokens == 0 and decode_tokens > 0.
  std::int64_t prefill_tokens = 0;  ///< prefill tokens in the step's batch
  std::int64_t decode_tokens = 0;   ///< decode tokens in the step's batch
};

struct RoutedLoad {
  std::vector<std::int32_t> slot_tokens;  ///< tokens per physical slot (gpu-major)
  /// Set by every route(): true when the step's dispatch is an all-gather of the tokens' hidden states
  /// (metro needs every GPU to see every token's top-k), false for the usual all-to-all.
  bool all_gather_dispatch = false;
};

class RoutingPolicy {
 public:
  virtual ~RoutingPolicy() = default;
  /// Writes out.slot_tokens (already sized to placement.num_slots()) and out.all_gather_dispatch.
  virtual void route(const StepLayerLoad& load, const LayerPlacement& placement, RoutedLoad& out) = 0;
};

}  // namespace epsim::policies
