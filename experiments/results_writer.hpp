#pragma once
// Writes a run's results directory: summary.json (config echo, seed, version, metrics) and
// requests.csv, each file atomically.
#include <filesystem>
#include <string>

#include "experiments/experiment_config.hpp"
#include "sim/serving/simulator.hpp"

namespace epsim::experiments {

/// The summary as JSON text (deterministic: no wall-clock values).
std::string summary_json(const ExperimentConfig& cfg, const serving::SimulationResult& res);
/// One row per request, times in integer nanoseconds plus derived milliseconds.
std::string requests_csv(const serving::SimulationResult& res);
/// Creates `dir` if needed and writes both files into it.
void write_results(const std::filesystem::path& dir, const ExperimentConfig& cfg, const serving::SimulationResult& res);
/// A few human-readable lines for the terminal.
std::string human_summary(const ExperimentConfig& cfg, const serving::SimulationResult& res);

}  // namespace epsim::experiments
