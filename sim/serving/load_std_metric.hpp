#pragma once
// gpu_load_std_tokens (GRACE-MoE's Figure 5): per MoE layer, the standard deviation over the group's
// GPUs of the token-expert pairs each computes, averaged over the measured steps' layers.
#include <Eigen/Core>
#include <span>
#include <vector>

#include "sim/serving/summary_metric.hpp"

namespace epsim::serving {

class LoadStdMetric final : public SummaryMetric {
 public:
  /// `group_gpus`: the GPUs of each EP group (pools may differ in size).
  explicit LoadStdMetric(std::span<const int> group_gpus);
  void on_layer(const LayerRecord& layer) override;
  void on_step(const StepRecord& step) override;
  void report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const override;

 private:
  struct Step {
    core::Time start_ns = 0;
    double std_sum = 0.0;  // over the step's MoE layers
    int layers = 0;
  };
  std::vector<Eigen::ArrayXd> pairs_;  // workspace per group: one layer's pairs per GPU
  std::vector<Step> pending_;          // per group: the step in flight (its layers come before its end)
  std::vector<Step> steps_;            // ended steps, in the order they ended
};

}  // namespace epsim::serving
