#pragma once
// When to re-place experts during serving (DESIGN.md 6). The engine shows a trigger every step's expert
// loads; a trigger may answer with a new placement, which the engine then migrates to.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "policies/placement_policy.hpp"

namespace epsim::policies {

struct RebalanceView {
  std::int64_t step = 0;
  std::span<const std::int32_t> expert_tokens;  ///< this step's tokens per expert, [layer][expert]
  const Placement* current = nullptr;
  bool migrating = false;  ///< a placement change is still moving weights: a new one would be dropped
  /// When the trigger asked (needs_prediction()): the expected routing of the group's queued and running
  /// requests (or the next admissions': prediction_queued_only()) over the trigger's horizon, token-expert pairs
  /// [phase][layer][origin GPU][expert], their prompts' (phase 0) apart from their decode (phase 1).
  /// Empty when the routing source cannot predict (a replayed trace).
  std::span<const double> predicted_load = {};
  /// Forward passes that work takes, per phase: the busiest rank's prompt tokens over the step budget
  /// (rounded up), and the most decode steps any request has ahead within the horizon.
  std::array<double, 2> predicted_passes = {};
  /// This step's prompt and decode tokens (the reactive baseline tells prefill passes from decode steps).
  std::int64_t prefill_tokens = 0;
  std::int64_t decode_tokens = 0;
  /// Requests the group queued since the previous view (new work: DIRECTOR re-optimises before it).
  std::int64_t arrivals = 0;
};

class RebalanceTrigger {
 public:
  virtual ~RebalanceTrigger() = default;
  virtual std::optional<Placement> on_step(const RebalanceView& view) = 0;
  /// Whether on_step(view) wants RebalanceView::predicted_load filled in (it costs the engine a pass over
  /// the group's requests; `view` has everything else), and over how many steps of their work.
  virtual bool needs_prediction(const RebalanceView& /*view*/) const { return false; }
  virtual std::int64_t prediction_horizon_steps() const { return 0; }
  /// Whether the prediction covers only the queued requests the next admissions take (the next batch
  /// under static batching) rather than every outstanding one.
  virtual bool prediction_queued_only() const { return false; }
  /// Named counters and measures of what the trigger did, for the run's summary (summed over groups).
  virtual std::vector<std::pair<std::string, double>> stats() const { return {}; }
};

/// vLLM-style periodic EPLB: keeps the loads of the last `window_steps` steps and every `interval_steps`
/// steps recomputes the EPLB placement from them.
class PeriodicEplbTrigger final : public RebalanceTrigger {
 public:
  PeriodicEplbTrigger(const PlacementInput& shape, std::int64_t window_steps, std::int64_t interval_steps);
  std::optional<Placement> on_step(const RebalanceView& view) override;

 private:
  PlacementInput shape_;
  std::int64_t window_;
  std::int64_t interval_;
  std::vector<std::int32_t> ring_;  // window x layers x experts
  std::int64_t seen_ = 0;
};

}  // namespace epsim::policies
