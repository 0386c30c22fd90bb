// SPDX-License-Identifier: Apache-2.0
#pragma once
// A run's metrics as a flat list of named numbers, for studies: every metric of summary.json's
// "metrics" object (nested names joined with dots: "ttft_ms.p90", "slo.attainment"; booleans as 0/1;
// the per-GPU busy fractions as their min, mean and max), then the cluster's size ("gpus", "ep_size")
// and the per-GPU figures a what-if compares setups of different sizes by.
#include <string>
#include <utility>
#include <vector>

#include "experiments/assembly/experiment_config.hpp"
#include "sim/simulator.hpp"

namespace epsim::experiments {

using NamedValues = std::vector<std::pair<std::string, double>>;

NamedValues run_metrics(const ExperimentConfig& cfg, const serving::SimulationResult& res);

/// The value named `name`, or NaN.
double metric_value(const NamedValues& m, std::string_view name);

}  // namespace epsim::experiments
