// SPDX-License-Identifier: Apache-2.0
#pragma once
// vLLM-style periodic EPLB (trigger "periodic"): keeps the loads of the last `window_steps` steps and
// every `interval_steps` steps recomputes the EPLB placement from them: with the run's own EPLB (its
// variant: reference, distinct_per_gpu or biased) when the run places by EPLB, else DeepSeek's reference
// (vLLM starts from its default placement and rebalances by the reference).
#include <cstdint>
#include <memory>
#include <vector>

#include "policies/registry.hpp"
#include "policies/trigger_factory.hpp"

namespace epsim::policies {

struct PeriodicEplbOptions {
  std::int64_t window_steps = 64;     ///< steps of expert loads the EPLB solve sees
  std::int64_t interval_steps = 256;  ///< steps between solves
};

class PeriodicEplbTrigger final : public RebalanceTrigger {
 public:
  /// `eplb`: the placement each solve runs (null: DeepSeek's reference EPLB).
  PeriodicEplbTrigger(const PlacementInput& shape, PeriodicEplbOptions opt, std::unique_ptr<PlacementPolicy> eplb = {});
  std::optional<Placement> on_step(const RebalanceView& view) override;
  RebalanceKind kind() const override { return RebalanceKind::eplb_periodic; }

 private:
  PlacementInput shape_;
  PeriodicEplbOptions opt_;
  std::unique_ptr<PlacementPolicy> eplb_;
  std::vector<std::int32_t> ring_;  // window x layers x experts
  std::int64_t seen_ = 0;
};

/// The registry entry: parses [policy.rebalance]'s window_steps and interval_steps.
Registry<TriggerFactory>::Entry periodic_eplb_trigger_entry();

}  // namespace epsim::policies
