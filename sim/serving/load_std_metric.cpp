#include "sim/serving/load_std_metric.hpp"

#include <cmath>

namespace epsim::serving {

LoadStdMetric::LoadStdMetric(std::span<const int> group_gpus) {
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
  Step& s = pending_[static_cast<std::size_t>(layer.group)];
  s.std_sum += std::sqrt((pairs - pairs.mean()).square().mean());
  ++s.layers;
}

void LoadStdMetric::on_step(const StepRecord& step) {
  if (static_cast<std::size_t>(step.group) >= pending_.size()) {
    pending_.resize(static_cast<std::size_t>(step.group) + 1);
  }
  Step& s = pending_[static_cast<std::size_t>(step.group)];
  s.start_ns = step.start_ns;
  steps_.push_back(s);
  s = Step{};
}

void LoadStdMetric::report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const {
  double sum = 0.0;
  std::int64_t layers = 0;
  for (const Step& s : steps_) {
    if (window.contains(s.start_ns)) {
      sum += s.std_sum;
      layers += s.layers;
    }
  }
  out.push_back({"gpu_load_std_tokens", layers > 0 ? sum / static_cast<double>(layers) : 0.0});
}

}  // namespace epsim::serving
