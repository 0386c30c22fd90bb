#pragma once
// gpu_load_std_tokens (GRACE-MoE's Figure 5): per MoE layer, the standard deviation over the group's
// GPUs of the token-expert pairs each computes, averaged over the measured steps' layers.
#include <Eigen/Core>
#include <vector>

#include "sim/serving/summary_metric.hpp"

namespace epsim::serving {

class LoadStdMetric final : public SummaryMetric {
 public:
  explicit LoadStdMetric(int ep_size);
  void on_layer(const LayerRecord& layer) override;
  void on_step(const StepRecord& step) override;
  void report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const override;

 private:
  struct Step {
    core::Time start_ns = 0;
    double std_sum = 0.0;  // over the step's MoE layers
    int layers = 0;
  };
  Eigen::ArrayXd pairs_;       // workspace: one layer's pairs per GPU
  std::vector<Step> pending_;  // per group: the step in flight (its layers come before its end)
  std::vector<Step> steps_;    // ended steps, in the order they ended
};

}  // namespace epsim::serving
