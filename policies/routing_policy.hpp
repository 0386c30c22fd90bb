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
};

struct RoutedLoad {
  std::vector<std::int32_t> slot_tokens;  ///< tokens per physical slot (gpu-major)
};

class RoutingPolicy {
 public:
  virtual ~RoutingPolicy() = default;
  /// Writes out.slot_tokens (already sized to placement.num_slots()).
  virtual void route(const StepLayerLoad& load, const LayerPlacement& placement, RoutedLoad& out) = 0;
};

}  // namespace epsim::policies
