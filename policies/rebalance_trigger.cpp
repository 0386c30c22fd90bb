#include "policies/rebalance_trigger.hpp"

#include <algorithm>

#include "policies/eplb_placement.hpp"

namespace epsim::policies {

PeriodicEplbTrigger::PeriodicEplbTrigger(const PlacementInput& shape, std::int64_t window_steps,
                                         std::int64_t interval_steps)
    : shape_(shape),
      window_(window_steps),
      interval_(interval_steps),
      ring_(static_cast<std::size_t>(window_steps) * static_cast<std::size_t>(shape.num_layers) *
                static_cast<std::size_t>(shape.num_experts),
            0) {}

std::optional<Placement> PeriodicEplbTrigger::on_step(const RebalanceView& view) {
  const std::size_t per_step = view.expert_tokens.size();
  std::copy(view.expert_tokens.begin(), view.expert_tokens.end(),
            ring_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(seen_ % window_) * per_step));
  ++seen_;
  if (seen_ % interval_ != 0) {
    return std::nullopt;
  }
  // The window's total load per expert (fewer steps if the run is younger than the window).
  PlacementInput in = shape_;
  in.expert_load.assign(per_step, 0.0);
  const std::int64_t steps = std::min(seen_, window_);
  for (std::int64_t s = 0; s < steps; ++s) {
    for (std::size_t i = 0; i < per_step; ++i) {
      in.expert_load[i] += ring_[static_cast<std::size_t>(s) * per_step + i];
    }
  }
  return EplbPlacement().place(in);
}

}  // namespace epsim::policies
