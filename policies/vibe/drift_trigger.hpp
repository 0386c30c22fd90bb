// SPDX-License-Identifier: Apache-2.0
#pragma once
// ViBE's drift-triggered recalibration (paper 001, Section 4.2.4 and Algorithm 1, phase 3): every H
// forward passes, compare each layer's mean expert-load vector over the last `window` passes with the
// reference snapshot by cosine distance d = 1 - w.w_ref / (|w| |w_ref|). Passes with prompt tokens and
// decode-only passes route from different distributions (a prompt chunk is one request's routing, a
// decode step the running batch's), so a token-weighted window mean moves with the batch mix when the
// workload does not (measured: 43 false detections in 60 s of a steady mixed run), and a pass with a
// prompt chunk mixes it with decode tokens in proportions that follow the chunk's length. So drift is
// measured on the decode-only passes whenever they are a quarter of the window, else on the prompt
// passes (a prefill pool, a prefill-only workload), each class against its own reference: the first
// full window's, then the window each recalibration used. A layer's distance counts net of the distance
// two windows of one distribution show from sampling alone (it reaches delta at low load). When any layer's d
// exceeds delta, collect fresh routing statistics (a whole new window, all after the detection: the paper's
// "under the new distribution"), then run the incremental solver (vibe_incremental_layer) on every
// layer with them, move only the swapped experts, take them as the new reference and cool down for H
// passes. No check runs while a previous change is still migrating (it would be dropped).
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "policies/cost_curves.hpp"
#include "policies/rebalance_trigger.hpp"
#include "policies/registry.hpp"
#include "policies/trigger_factory.hpp"

namespace epsim::policies {

struct DriftOptions {
  std::int64_t check_every_steps = 10;  ///< H
  std::int64_t window_steps = 100;      ///< passes averaged into the current load vector
  double threshold = 0.05;              ///< delta_cos
  double tolerance = 0.03;              ///< epsilon of the incremental solver
  int max_swaps_per_layer = 1000;       ///< guard; the paper reports 5-30 swaps per layer
};

class DriftTrigger final : public RebalanceTrigger {
 public:
  DriftTrigger(const PlacementInput& shape, std::shared_ptr<const CostCurves> curves, DriftOptions opt);
  std::optional<Placement> on_step(const RebalanceView& view) override;
  RebalanceKind kind() const override { return RebalanceKind::vibe_recalibration; }
  /// The largest per-layer cosine distance at the last check (for reporting and tests).
  double last_distance() const { return last_distance_; }
  std::int64_t recalibrations() const { return recalibrations_; }
  std::int64_t detections() const { return detections_; }
  std::vector<TriggerStat> stats() const override {
    return {TriggerStat::total("drift_detections", static_cast<double>(detections_)),
            TriggerStat::total("recalibrations", static_cast<double>(recalibrations_))};
  }

 private:
  std::optional<Placement> recalibrate(const RebalanceView& view);

  /// The largest per-layer distance of a class's window from its reference (0 when the class is too
  /// rare in the window or has no reference yet; takes the reference then).
  double class_distance(int c);

  PlacementInput shape_;
  std::shared_ptr<const CostCurves> curves_;
  DriftOptions opt_;
  std::vector<std::int32_t> ring_;                // window x layers x experts
  std::vector<std::uint8_t> ring_class_;          // per window slot: 1 = the pass had prompt tokens
  std::vector<double> sum_;                       // the window's total per [layer][expert]
  std::array<std::vector<double>, 2> class_sum_;  // ... of the decode-only (0) and prompt (1) passes
  std::array<std::int64_t, 2> class_count_{};
  std::array<std::vector<double>, 2> class_ref_;  // empty: not taken yet
  std::int64_t seen_ = 0;
  std::int64_t cool_until_ = 0;  // no check before this many passes
  std::int64_t solve_at_ = -1;   // drift detected: solve when this many passes have been seen
  std::int64_t detections_ = 0;
  double last_distance_ = 0.0;
  std::int64_t recalibrations_ = 0;
};

/// The registry entry ("drift"): parses [policy.rebalance]'s check_every_steps, window_steps, threshold
/// and tolerance; each group's trigger sees its own GPUs' curves.
Registry<TriggerFactory>::Entry drift_trigger_entry();

}  // namespace epsim::policies
