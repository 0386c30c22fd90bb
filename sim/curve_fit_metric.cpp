// SPDX-License-Identifier: Apache-2.0
#include "sim/curve_fit_metric.hpp"

#include <cmath>
#include <limits>
#include <utility>

namespace epsim::serving {

CurveFitMetric::CurveFitMetric(std::shared_ptr<const policies::CostCurves> curves, int group, int moe_layers,
                               const MetricsWindow& window)
    : FoldedSummaryMetric(window),
      curves_(std::move(curves)),
      group_(group),
      warmup_ns_(core::from_seconds(window.warmup_s)),
      layer_predicted_ns_(static_cast<std::size_t>(moe_layers), 0.0),
      layer_simulated_ns_(static_cast<std::size_t>(moe_layers), 0.0) {}

void CurveFitMetric::on_layer(const LayerRecord& l) {
  if (l.group != group_ || l.expert_max_ns <= 0.0) {
    return;  // another group's GPUs, or a layer without expert work
  }
  double predicted = 0.0;
  std::size_t predicted_gpu = 0;
  std::size_t simulated_gpu = 0;
  for (std::size_t g = 0; g < l.gpu_tokens.size(); ++g) {
    const double active =
        g < l.gpu_activated.size() ? static_cast<double>(l.gpu_activated[g]) : std::numeric_limits<double>::infinity();
    const double ns = curves_->ns(static_cast<int>(g), static_cast<double>(l.gpu_tokens[g]), active);
    if (ns > predicted) {
      predicted = ns;
      predicted_gpu = g;
    }
    if (l.gpu_expert_ns[g] > l.gpu_expert_ns[simulated_gpu]) {
      simulated_gpu = g;
    }
  }
  pending_.layers += 1;
  pending_.predicted_ns += predicted;
  pending_.simulated_ns += l.expert_max_ns;
  pending_.abs_error += std::abs(predicted / l.expert_max_ns - 1.0);
  pending_.agree += predicted_gpu == simulated_gpu ? 1 : 0;
  if (l.step_start_ns >= warmup_ns_) {
    layer_predicted_ns_[static_cast<std::size_t>(l.moe_layer)] += predicted;
    layer_simulated_ns_[static_cast<std::size_t>(l.moe_layer)] += l.expert_max_ns;
  }
}

void CurveFitMetric::on_step(const StepRecord& step) {
  if (step.group != group_) {
    return;
  }
  pending_.steps = 1;
  steps_.add(step.start_ns, pending_);
  pending_ = CurveFitStep{};
}

void CurveFitMetric::report(const MeasuredWindow& window, std::vector<SummaryFigure>& out) const {
  const CurveFitStep t = steps_.total(window.begin_ns, window.end_ns);
  const double steps = t.steps > 0 ? static_cast<double>(t.steps) : 1.0;
  const double layers = t.layers > 0 ? static_cast<double>(t.layers) : 1.0;
  double worst = 0.0;
  int worst_layer = -1;
  for (std::size_t m = 0; m < layer_simulated_ns_.size(); ++m) {
    if (layer_simulated_ns_[m] > 0.0) {
      const double e = layer_predicted_ns_[m] / layer_simulated_ns_[m] - 1.0;
      if (worst_layer < 0 || std::abs(e) > std::abs(worst)) {
        worst = e;
        worst_layer = static_cast<int>(m);
      }
    }
  }
  out.push_back({"curve_fit.predicted_expert_ms", t.predicted_ns / steps / 1e6});
  out.push_back({"curve_fit.simulated_expert_ms", t.simulated_ns / steps / 1e6});
  out.push_back({"curve_fit.mean_abs_error", t.abs_error / layers});
  out.push_back({"curve_fit.straggler_agreement", static_cast<double>(t.agree) / layers});
  out.push_back({"curve_fit.worst_layer_error", worst});
  out.push_back({"curve_fit.worst_layer", static_cast<double>(worst_layer)});
}

}  // namespace epsim::serving
