// SPDX-License-Identifier: Apache-2.0
#pragma once
// A headline metric as one observer: it watches the run's layers and steps and, at the end, reports its
// figures over the measurement window into summary.json's metrics. A new per-step or per-layer metric
// is its own file plus one line in summary_metrics.cpp; the engine, the step record and the results
// writer do not change.
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "policies/cost_curves.hpp"
#include "sim/metrics.hpp"
#include "sim/observer.hpp"
#include "sim/window_fold.hpp"

namespace epsim::serving {

/// One number of summary.json's metrics section.
struct SummaryFigure {
  std::string name;
  double value = 0.0;
};

class SummaryMetric : public Observer {
 public:
  /// Appends the metric's figures, over the steps that started in `window`.
  virtual void report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const = 0;
};

/// A summary metric whose per-step samples fold over the measurement window (window_fold.hpp): it
/// forwards the arrivals that decide the window to its fold, `steps_`.
template <class Step>
class FoldedSummaryMetric : public SummaryMetric {
 public:
  explicit FoldedSummaryMetric(const MetricsWindow& window) : steps_(window) {}
  void on_arrival(const RequestState& r) override { steps_.on_arrival(r.spec.arrival_ns); }
  void on_arrivals_end(core::Time last_arrival_ns) override { steps_.on_arrivals_end(last_arrival_ns); }

 protected:
  WindowFold<Step, Step> steps_;
};

/// The cost curves the placement policy optimised against, for the curve-fit figures (none: no curves).
struct PlacementCurves {
  std::shared_ptr<const policies::CostCurves> curves;
  int group = 0;       ///< the EP group whose GPUs they describe
  int moe_layers = 0;  ///< of the model
};

/// Every summary metric a run reports, for EP groups of `group_gpus[g]` GPUs each (a line each), over
/// the measurement window `window` (metrics fold their samples as they go: see window_fold.hpp);
/// `speculative`: speculative decoding is on (its speculative.* figures); `power_limited`: a power limiter
/// clocks the GPUs (its dvfs.* figures).
std::vector<std::unique_ptr<SummaryMetric>> make_summary_metrics(std::span<const int> group_gpus,
                                                                 const MetricsWindow& window,
                                                                 const PlacementCurves& curves = {},
                                                                 bool speculative = false, bool power_limited = false);

}  // namespace epsim::serving
