// SPDX-License-Identifier: Apache-2.0
#include "sim/activated_metric.hpp"

#include <algorithm>

namespace epsim::serving {

ActivatedMetric::ActivatedMetric(int groups, const MetricsWindow& window)
    : FoldedSummaryMetric(window), pending_(static_cast<std::size_t>(groups)) {}

void ActivatedMetric::on_layer(const LayerRecord& l) {
  if (l.gpu_activated.empty()) {
    return;
  }
  // Integer sums (exact in any order, so the loop vectorises) equal the sum of the counts as doubles:
  // both are exact far below 2^53.
  std::int32_t most = 0;
  std::int64_t total = 0;
  for (const std::int32_t a : l.gpu_activated) {
    most = std::max(most, a);
    total += a;
  }
  const auto sum = static_cast<double>(total);
  ActivatedStep& s = pending_.at(static_cast<std::size_t>(l.group));
  s.max_sum += most;
  s.mean_sum += sum / static_cast<double>(l.gpu_activated.size());
  ++s.layers;
}

void ActivatedMetric::on_step(const StepRecord& step) {
  ActivatedStep& s = pending_.at(static_cast<std::size_t>(step.group));
  steps_.add(step.start_ns, s);
  s = ActivatedStep{};
}

void ActivatedMetric::report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const {
  const ActivatedStep t = steps_.total(window.begin_ns, window.end_ns);
  const double layers = t.layers > 0 ? static_cast<double>(t.layers) : 1.0;
  out.push_back({"activated_experts.max_per_gpu", t.max_sum / layers});
  out.push_back({"activated_experts.mean_per_gpu", t.mean_sum / layers});
}

}  // namespace epsim::serving
