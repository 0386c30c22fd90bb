// SPDX-License-Identifier: Apache-2.0
#include "sim/load_std_metric.hpp"

#include <cmath>

namespace epsim::serving {

LoadStdMetric::LoadStdMetric(std::span<const int> group_gpus, const MetricsWindow& window)
    : FoldedSummaryMetric(window) {
  for (const int gpus : group_gpus) {
    pairs_.push_back(Eigen::ArrayXd::Zero(gpus));
  }
}

void LoadStdMetric::on_layer(const LayerRecord& layer) {
  if (static_cast<std::size_t>(layer.group) >= pending_.size()) {
    pending_.resize(static_cast<std::size_t>(layer.group) + 1);
  }
  Eigen::ArrayXd& pairs = pairs_.at(static_cast<std::size_t>(layer.group));
  for (std::size_t g = 0; g < layer.gpu_tokens.size(); ++g) {
    pairs(static_cast<Eigen::Index>(g)) = static_cast<double>(layer.gpu_tokens[g]);
  }
  LoadStdStep& s = pending_[static_cast<std::size_t>(layer.group)];
  s.std_sum += std::sqrt((pairs - pairs.mean()).square().mean());
  ++s.layers;
  if (const double most = pairs.maxCoeff(); most > 0.0) {
    s.balance_sum += pairs.mean() / most;
    ++s.loaded_layers;
  }
}

void LoadStdMetric::on_step(const StepRecord& step) {
  if (static_cast<std::size_t>(step.group) >= pending_.size()) {
    pending_.resize(static_cast<std::size_t>(step.group) + 1);
  }
  LoadStdStep& s = pending_[static_cast<std::size_t>(step.group)];
  steps_.add(step.start_ns, s);
  s = LoadStdStep{};
}

void LoadStdMetric::report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const {
  const LoadStdStep t = steps_.total(window.begin_ns, window.end_ns);
  out.push_back({"gpu_load_std_tokens", t.layers > 0 ? t.std_sum / static_cast<double>(t.layers) : 0.0});
  out.push_back({"gpu_balancedness", t.loaded_layers > 0 ? t.balance_sum / static_cast<double>(t.loaded_layers) : 0.0});
}

}  // namespace epsim::serving
