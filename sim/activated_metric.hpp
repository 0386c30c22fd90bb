// SPDX-License-Identifier: Apache-2.0
#pragma once
// activated_experts.max_per_gpu / .mean_per_gpu (metro's balance, paper 003 Figure 8): per MoE layer, the
// most and the mean experts with at least one token on a GPU of the group (a decode step's weight
// reads), averaged over the measured steps' layers.
#include <span>
#include <vector>

#include "sim/summary_metric.hpp"

namespace epsim::serving {

/// One step's sample of ActivatedMetric (and the window's totals).
struct ActivatedStep {
  double max_sum = 0.0;  // over the step's MoE layers
  double mean_sum = 0.0;
  std::int64_t layers = 0;
  void add(const ActivatedStep& s) {
    max_sum += s.max_sum;
    mean_sum += s.mean_sum;
    layers += s.layers;
  }
};

class ActivatedMetric final : public FoldedSummaryMetric<ActivatedStep> {
 public:
  ActivatedMetric(int groups, const MetricsWindow& window);
  void on_layer(const LayerRecord& layer) override;
  void on_step(const StepRecord& step) override;
  void report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const override;

 private:
  std::vector<ActivatedStep> pending_;  // per group: the step in flight
};

}  // namespace epsim::serving
