// SPDX-License-Identifier: Apache-2.0
#pragma once
// How well the cost curves a placement policy optimised against (GEM, ViBE, DIRECTOR: C_g(n, a) per GPU)
// predict the run it then served: for every measured MoE layer of the group the curves describe, the
// slowest GPU the curves predict from that layer's actual tokens per GPU against the slowest the
// simulator priced (which also sees each expert's padding, activated experts, jitter and drift). A
// placement that loses to a load-blind one while its curves are accurate lost to its load window; one
// whose curves are off lost to its profile. Figures in summary.json's metrics (curve_fit.*):
//   predicted_expert_ms, simulated_expert_ms  the slowest GPUs' expert time per step, summed over layers
//   mean_abs_error                            mean over step-layers of |predicted / simulated - 1|
//   straggler_agreement                       share of step-layers whose predicted slowest GPU is the
//                                             simulated one (ties: the lowest GPU)
//   worst_layer_error, worst_layer            the MoE layer whose summed prediction is furthest off
//                                             (signed relative error), over steps after the warm-up
#include <memory>
#include <vector>

#include "policies/cost_curves.hpp"
#include "sim/summary_metric.hpp"

namespace epsim::serving {

/// One step's sample of CurveFitMetric (and the window's totals).
struct CurveFitStep {
  std::int64_t steps = 0;
  std::int64_t layers = 0;
  double predicted_ns = 0.0;
  double simulated_ns = 0.0;
  double abs_error = 0.0;
  std::int64_t agree = 0;
  void add(const CurveFitStep& s) {
    steps += s.steps;
    layers += s.layers;
    predicted_ns += s.predicted_ns;
    simulated_ns += s.simulated_ns;
    abs_error += s.abs_error;
    agree += s.agree;
  }
};

class CurveFitMetric final : public FoldedSummaryMetric<CurveFitStep> {
 public:
  /// `curves` describe the GPUs of EP group `group`, which has `moe_layers` MoE layers.
  CurveFitMetric(std::shared_ptr<const policies::CostCurves> curves, int group, int moe_layers,
                 const MetricsWindow& window);
  void on_layer(const LayerRecord& layer) override;
  void on_step(const StepRecord& step) override;
  void report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const override;

 private:
  std::shared_ptr<const policies::CostCurves> curves_;
  int group_;
  core::Time warmup_ns_;
  CurveFitStep pending_;                    // the group's step in flight (its layers come before its end)
  std::vector<double> layer_predicted_ns_;  // per MoE layer, steps after the warm-up
  std::vector<double> layer_simulated_ns_;
};

}  // namespace epsim::serving
