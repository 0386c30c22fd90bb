#include "sim/serving/load_std_metric.hpp"
#include "sim/serving/summary_metric.hpp"

namespace epsim::serving {

std::vector<std::unique_ptr<SummaryMetric>> make_summary_metrics(int ep_size) {
  std::vector<std::unique_ptr<SummaryMetric>> out;
  out.push_back(std::make_unique<LoadStdMetric>(ep_size));
  return out;
}

}  // namespace epsim::serving
