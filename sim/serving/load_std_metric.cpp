#include "sim/serving/load_std_metric.hpp"

#include <cmath>

namespace epsim::serving {

LoadStdMetric::LoadStdMetric(int ep_size) {
  pairs_.setZero(ep_size);
}

void LoadStdMetric::on_layer(const LayerRecord& layer) {
  if (static_cast<std::size_t>(layer.group) >= pending_.size()) {
    pending_.resize(static_cast<std::size_t>(layer.group) + 1);
  }
  for (std::size_t g = 0; g < layer.gpu_tokens.size(); ++g) {
    pairs_(static_cast<Eigen::Index>(g)) = static_cast<double>(layer.gpu_tokens[g]);
  }
  Step& s = pending_[static_cast<std::size_t>(layer.group)];
  s.std_sum += std::sqrt((pairs_ - pairs_.mean()).square().mean());
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
