// SPDX-License-Identifier: Apache-2.0
#pragma once
// gpu_load_std_tokens (GRACE-MoE's Figure 5): per MoE layer, the standard deviation over the group's
// GPUs of the token-expert pairs each computes, averaged over the measured steps' layers; and
// gpu_balancedness (SGLang's large-scale EP blog): per MoE layer, the mean over the max of those pairs,
// averaged over the layers with any (1 = perfectly balanced).
#include <Eigen/Core>
#include <span>
#include <vector>

#include "sim/summary_metric.hpp"

namespace epsim::serving {

/// One step's sample of LoadStdMetric (and the window's totals).
struct LoadStdStep {
  double std_sum = 0.0;  // over the step's MoE layers
  std::int64_t layers = 0;
  double balance_sum = 0.0;  // mean / max pairs, over the layers with any pairs
  std::int64_t loaded_layers = 0;
  void add(const LoadStdStep& s) {
    std_sum += s.std_sum;
    layers += s.layers;
    balance_sum += s.balance_sum;
    loaded_layers += s.loaded_layers;
  }
};

class LoadStdMetric final : public FoldedSummaryMetric<LoadStdStep> {
 public:
  /// `group_gpus`: the GPUs of each EP group (pools may differ in size).
  LoadStdMetric(std::span<const int> group_gpus, const MetricsWindow& window);
  void on_layer(const LayerRecord& layer) override;
  void on_step(const StepRecord& step) override;
  void report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const override;

 private:
  std::vector<Eigen::ArrayXd> pairs_;  // workspace per group: one layer's pairs per GPU
  std::vector<LoadStdStep> pending_;   // per group: the step in flight (its layers come before its end)
};

}  // namespace epsim::serving
