// SPDX-License-Identifier: Apache-2.0
#pragma once
// When to re-place experts during serving, for one EP group. The engine shows a trigger
// every step's expert loads; a trigger may answer with a new placement, which the engine then migrates
// to. Triggers are a registered family (trigger_factory.hpp, registry.hpp): a configured factory makes
// one trigger per group.
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "policies/placement_policy.hpp"
#include "policies/rebalance_kind.hpp"

namespace epsim::policies {

struct RebalanceView {
  std::int64_t step = 0;
  std::span<const std::int32_t> expert_tokens;  ///< this step's tokens per expert, [layer][expert]
  const Placement* current = nullptr;
  bool migrating = false;  ///< a placement change is still moving weights: a new one would be dropped
  /// When the trigger asked (wants_prediction()): the expected routing of the group's queued and running
  /// requests (or the next admissions': PredictionRequest::queued_only) over the trigger's horizon,
  /// token-expert pairs [phase][layer][origin GPU][expert], their prompts' (phase 0) apart from their
  /// decode (phase 1). Empty when the routing source cannot predict (a replayed trace).
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

/// The forecast a trigger asks for before on_step: the work of the group's requests over the next
/// `horizon_steps` steps, of every outstanding request or only of the queued ones the next admissions
/// take (the next batch under static batching).
struct PredictionRequest {
  std::int64_t horizon_steps = 0;
  bool queued_only = false;
};

/// One figure of what a trigger did, for summary.json's rebalancing section. Totals add up over EP
/// groups; a mean keeps its sum and count apart so that groups pool correctly.
struct TriggerStat {
  enum class Kind : std::uint8_t { total, mean };
  std::string name;
  Kind kind = Kind::total;
  double sum = 0.0;
  double count = 0.0;  ///< mean: observations behind `sum`

  static TriggerStat total(std::string name, double value) { return {std::move(name), Kind::total, value, 0.0}; }
  static TriggerStat mean(std::string name, double sum, double count) {
    return {std::move(name), Kind::mean, sum, count};
  }
  double value() const { return kind == Kind::total ? sum : (count > 0.0 ? sum / count : 0.0); }
  /// Pools another group's figure of the same name into this one.
  void pool(const TriggerStat& o) {
    sum += o.sum;
    count += o.count;
  }
};

class RebalanceTrigger {
 public:
  virtual ~RebalanceTrigger() = default;
  virtual std::optional<Placement> on_step(const RebalanceView& view) = 0;
  /// Whether on_step(view) wants RebalanceView::predicted_load filled in, and over what (it costs the
  /// engine a pass over the group's requests; `view` has everything else). Only triggers whose factory
  /// declares PolicyNeeds::predictions are asked.
  virtual std::optional<PredictionRequest> wants_prediction(const RebalanceView& /*view*/) const {
    return std::nullopt;
  }
  /// Whether, and over what, the trigger wants to place for new work that finds its group idle (asked
  /// before that work's first step; only triggers whose factory declares PolicyNeeds::predictions).
  virtual std::optional<PredictionRequest> wants_idle_start() const { return std::nullopt; }
  /// Before the first step of work that arrived to an idle group (`view.arrivals` > 0, no step loads,
  /// predicted_load filled as wants_idle_start() asked): a placement for it, or nothing. The work then
  /// starts on the old placement while the new one moves in (or waits for it under stop_the_world).
  virtual std::optional<Placement> on_idle_start(const RebalanceView& /*view*/) { return std::nullopt; }
  /// What the trigger did so far, in the order summary.json lists it.
  virtual std::vector<TriggerStat> stats() const { return {}; }
  /// What a placement returned by on_step is (events.csv and the timeline name it).
  virtual RebalanceKind kind() const { return RebalanceKind::other; }
};

}  // namespace epsim::policies
