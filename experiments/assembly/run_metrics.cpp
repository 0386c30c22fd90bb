// SPDX-License-Identifier: Apache-2.0
#include "experiments/assembly/run_metrics.hpp"

#include <algorithm>
#include <limits>

#include "experiments/assembly/results_writer.hpp"

namespace epsim::experiments {
namespace {

void flatten(const nlohmann::ordered_json& j, const std::string& prefix, NamedValues& out) {
  for (const auto& [key, value] : j.items()) {
    std::string name = prefix;
    if (!name.empty()) {
      name += '.';
    }
    name += key;
    if (value.is_object()) {
      flatten(value, name, out);
    } else if (value.is_boolean()) {
      out.emplace_back(name, value.get<bool>() ? 1.0 : 0.0);
    } else if (value.is_number()) {
      out.emplace_back(name, value.get<double>());
    } else if (value.is_array() && !value.empty() && value.front().is_number()) {
      double lo = std::numeric_limits<double>::infinity();
      double hi = -lo;
      double sum = 0.0;
      for (const auto& v : value) {
        const double x = v.get<double>();
        lo = std::min(lo, x);
        hi = std::max(hi, x);
        sum += x;
      }
      out.emplace_back(name + ".min", lo);
      out.emplace_back(name + ".mean", sum / static_cast<double>(value.size()));
      out.emplace_back(name + ".max", hi);
    }
  }
}

}  // namespace

NamedValues run_metrics(const ExperimentConfig& cfg, const serving::SimulationResult& res) {
  NamedValues out;
  flatten(metrics_json(cfg, res), "", out);
  const auto gpus = static_cast<double>(cfg.cluster.num_gpus());
  out.emplace_back("gpus", gpus);
  out.emplace_back("ep_size", static_cast<double>(cfg.ep_size()));  // the primary pool's, when the pools differ
  out.emplace_back("goodput_rps_per_gpu", res.summary.goodput_rps / gpus);
  out.emplace_back("throughput_rps_per_gpu", res.summary.throughput_rps / gpus);
  out.emplace_back("output_tokens_per_s_per_gpu", res.summary.output_tokens_per_s / gpus);
  return out;
}

double metric_value(const NamedValues& m, std::string_view name) {
  const auto it = std::find_if(m.begin(), m.end(), [&](const auto& e) { return e.first == name; });
  return it == m.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
}

}  // namespace epsim::experiments
