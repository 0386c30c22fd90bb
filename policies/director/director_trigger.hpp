// SPDX-License-Identifier: Apache-2.0
#pragma once
// DIRECTOR online (paper 002, Sections IV-V): before each batch of queued work (every `interval_steps`
// steps, or at the first step boundary after new requests were queued) the placement is re-optimised
// (director_placement.hpp) for the workload of the work ahead, prefill and decode passes apart
// (director_model.hpp), and the engine migrates to it. Proactive (DIRECTOR): W is the *predicted*
// routing of the group's outstanding requests over the next `horizon_steps` steps (or of the queued
// ones the next admissions take),
// from a predictor of top-k accuracy p: each predicted selection is the true one with probability p,
// otherwise a wrong expert drawn by the layer's popularity, so in expectation W_pred = p W + (1 - p)
// x (each origin's tokens spread by popularity); p = 1 is the oracle. Reactive (the paper's online
// baseline): W is what the steps since the last re-optimisation routed (origins spread evenly). No
// re-optimisation starts while a previous change is still migrating. When every expert has one copy, the
// re-optimised placement goes through director_reconfigure.hpp: relabelled to keep experts where they
// are, and a layer changes only for a gain of at least `min_gain` of its modelled latency. The optimiser
// itself charges every expert it moves (director_model.hpp's migration term, `migration_weight` x
// move_ns_per_expert), so it trades moves against gains instead of proposing ~all-new placements. A
// batch that arrives to an idle group is placed for before its first step (`idle_start`, proactive): it
// starts on the old placement while the new one moves in (compute_phases) or waits for it
// (stop_the_world).
#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "policies/director/director_placement.hpp"
#include "policies/director/routing_predictor.hpp"
#include "policies/rebalance_trigger.hpp"
#include "policies/registry.hpp"
#include "policies/trigger_factory.hpp"

namespace epsim::policies {

struct DirectorTriggerOptions {
  enum class Mode : std::uint8_t { proactive, reactive };
  Mode mode = Mode::proactive;
  /// When to re-optimise: every `interval_steps` steps, or at the first step boundary after new requests
  /// were queued (a new batch of queued work; deferred while a change is migrating).
  enum class When : std::uint8_t { interval, arrivals };
  When when = When::interval;
  std::int64_t interval_steps = 50;  ///< steps between re-optimisations (a "batch" of queued work)
  std::int64_t horizon_steps = 50;   ///< proactive: steps of the requests' work W predicts
  double accuracy = 1.0;             ///< proactive: the predictor's top-k accuracy p (1 = oracle)
  double min_gain = 0.02;            ///< a layer moves only for at least this share of its modelled latency
  /// The optimiser charges each moved expert this x move_ns_per_expert (0: the paper's free moves).
  double migration_weight = 1.0;
  /// proactive: predict the work of the queued requests the next admissions take (the next batch under
  /// static batching), not of every outstanding one.
  bool queued_only = false;
  /// proactive: the routing predictor whose Table II accuracy p applies, unless overridden.
  PredictorKind predictor = PredictorKind::quantized;
  std::optional<double> accuracy_override;
  /// proactive: place for new work that finds the group idle before its first step (otherwise it starts
  /// on the placement it finds, and only the work queued behind it is placed for).
  bool idle_start = true;
};

class DirectorTrigger final : public RebalanceTrigger {
 public:
  /// `shape`: the group's shape, curves and links; `popularity`: [layer][expert] loads the predictor's
  /// wrong guesses follow (e.g. the load window).
  DirectorTrigger(PlacementInput shape, DirectorOptions opt, DirectorTriggerOptions trig,
                  std::vector<double> popularity);
  std::optional<Placement> on_step(const RebalanceView& view) override;
  RebalanceKind kind() const override { return RebalanceKind::director_reoptimisation; }
  std::optional<PredictionRequest> wants_prediction(const RebalanceView& view) const override;
  std::optional<PredictionRequest> wants_idle_start() const override;
  std::optional<Placement> on_idle_start(const RebalanceView& view) override;
  std::int64_t reoptimisations() const { return solves_; }
  /// Re-optimisations, the layers the reconfiguration kept because they would gain too little and those
  /// it polished, and the rounded placements' Eq. 5 over the LP bound, averaged over re-optimisations.
  std::vector<TriggerStat> stats() const override {
    return {TriggerStat::total("reoptimisations", static_cast<double>(solves_)),
            TriggerStat::total("layers_kept", static_cast<double>(layers_kept_)),
            TriggerStat::total("layers_polished", static_cast<double>(layers_polished_)),
            TriggerStat::mean("lp_gap_mean", gap_sum_, static_cast<double>(solves_))};
  }
  const DirectorReport& last_report() const { return policy_.last_report(); }
  /// The options it runs with (accuracy resolved from the predictor and the model).
  const DirectorTriggerOptions& options() const { return trig_; }

 private:
  bool due(std::int64_t arrivals) const;
  // W and pass counts into `in`: predicted for the queued work (proactive), or as observed since the
  // last re-optimisation, origins spread evenly (reactive).
  void predicted_workload(const RebalanceView& view, PlacementInput& in) const;
  void observed_workload(PlacementInput& in) const;
  // Solves for `in`, reconfigures against `current`; nothing when no expert would move.
  std::optional<Placement> reoptimise(const PlacementInput& in, const Placement& current);
  // Proactive: W predicted from `view`, then plan; nothing without a prediction.
  std::optional<Placement> plan_predicted(const RebalanceView& view);
  // reoptimise when `in` has work ahead.
  std::optional<Placement> plan(const PlacementInput& in, const Placement& current);

  PlacementInput shape_;
  DirectorPlacement policy_;
  DirectorTriggerOptions trig_;
  std::vector<double> popularity_;  // normalised per layer
  std::vector<double> observed_;    // tokens per [pass kind][layer][expert] since the last re-optimisation
  std::array<std::int64_t, 2> observed_steps_{};  // ... and its prefill and decode steps
  std::int64_t seen_ = 0;                         // steps since the last re-optimisation
  bool new_work_ = false;                         // requests queued since the last re-optimisation
  std::int64_t solves_ = 0;
  std::int64_t layers_kept_ = 0;
  std::int64_t layers_polished_ = 0;
  double gap_sum_ = 0.0;
};

/// The registry entry ("director"): parses [policy.rebalance]'s trigger options (mode, when,
/// interval_steps, horizon_steps, predict, predictor, accuracy, min_gain) and the optimiser's
/// (director_placement.hpp, with lp_mode "direct" by default: one solve, the same optimum as bisect).
Registry<TriggerFactory>::Entry director_trigger_entry();

}  // namespace epsim::policies
