// SPDX-License-Identifier: Apache-2.0
#pragma once
// Writes a run's results directory: summary.json (config echo, seed, version, metrics) and
// requests.csv, each file atomically.
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "experiments/assembly/experiment_config.hpp"
#include "sim/run_logs.hpp"
#include "sim/simulator.hpp"

namespace epsim::experiments {

/// The "metrics" object of summary.json: every headline metric, nested as it is written.
nlohmann::ordered_json metrics_json(const ExperimentConfig& cfg, const serving::SimulationResult& res);
/// The summary as JSON text (deterministic: no wall-clock values).
std::string summary_json(const ExperimentConfig& cfg, const serving::SimulationResult& res);
/// One row per request, times in integer nanoseconds plus derived milliseconds.
std::string requests_csv(const serving::SimulationResult& res);
/// The optional logs a run was asked for (null when not asked).
struct RunLogs {
  const serving::StepLog* steps = nullptr;
  const serving::TokenLog* tokens = nullptr;
  const serving::LayerLog* layers = nullptr;
  const serving::TimelineLog* timeline = nullptr;
  const serving::EventLog* events = nullptr;
  const serving::GpuLayerLog* gpu_layers = nullptr;
};

/// Every entry `epsim run` may write into its results directory (the logs, the report and its figures):
/// what a rerun may replace.
std::span<const std::string_view> run_output_names();

/// One file of a results directory: its name and what writes its content.
struct ResultFile {
  std::string name;
  std::function<void(std::ostream&)> write;
};

/// The files write_results writes, in its order: requests.csv, the asked-for logs, summary.json last (a
/// set with its summary is whole). The Python module takes them in memory from here.
std::vector<ResultFile> result_files(const ExperimentConfig& cfg, const serving::SimulationResult& res,
                                     const RunLogs& logs = {});

/// Creates `dir` if needed and writes summary.json, requests.csv and the asked-for logs into it.
void write_results(const std::filesystem::path& dir, const ExperimentConfig& cfg, const serving::SimulationResult& res,
                   const RunLogs& logs = {});
/// The EP sizes for banners: "EP8", or "prefill 1 x EP16, decode 2 x EP8" when the pools differ.
std::string ep_description(const ExperimentConfig& cfg);
/// "limited by a configured cap: scheduler.max_running_requests (seats) bound 87 % of rank-steps ...", or
/// "" when no cap held back waiting requests in k_cap_binding_threshold of the measured rank-steps.
std::string limits_line(const serving::CapTally& caps);
/// A few human-readable lines for the terminal.
std::string human_summary(const ExperimentConfig& cfg, const serving::SimulationResult& res);

}  // namespace epsim::experiments
