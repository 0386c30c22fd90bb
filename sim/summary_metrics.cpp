// SPDX-License-Identifier: Apache-2.0
#include "sim/activated_metric.hpp"
#include "sim/curve_fit_metric.hpp"
#include "sim/dvfs_metric.hpp"
#include "sim/load_std_metric.hpp"
#include "sim/speculative_metric.hpp"
#include "sim/summary_metric.hpp"

namespace epsim::serving {

std::vector<std::unique_ptr<SummaryMetric>> make_summary_metrics(std::span<const int> group_gpus,
                                                                 const MetricsWindow& window,
                                                                 const PlacementCurves& curves, bool speculative,
                                                                 bool power_limited) {
  std::vector<std::unique_ptr<SummaryMetric>> out;
  out.push_back(std::make_unique<LoadStdMetric>(group_gpus, window));
  out.push_back(std::make_unique<ActivatedMetric>(static_cast<int>(group_gpus.size()), window));
  if (curves.curves) {
    out.push_back(std::make_unique<CurveFitMetric>(curves.curves, curves.group, curves.moe_layers, window));
  }
  if (speculative) {
    out.push_back(std::make_unique<SpeculativeMetric>(static_cast<int>(group_gpus.size()), window));
  }
  if (power_limited) {
    out.push_back(std::make_unique<DvfsMetric>(window));
  }
  return out;
}

}  // namespace epsim::serving
