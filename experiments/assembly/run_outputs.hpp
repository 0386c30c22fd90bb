// SPDX-License-Identifier: Apache-2.0
#pragma once
// The optional outputs of one run ([output] keys: steps.csv, tokens.csv, layers.csv, timeline.json,
// events.csv, gpu_layers.csv), each an observer attached to the run's simulator; `logs()` hands them to
// write_results. They live as long as this object, which the simulator points into: it does not move.
#include <optional>

#include "experiments/assembly/experiment_config.hpp"
#include "experiments/assembly/results_writer.hpp"
#include "sim/run_logs.hpp"
#include "sim/simulator.hpp"

namespace epsim::experiments {

class RunOutputs {
 public:
  RunOutputs(serving::Simulator& sim, const ExperimentConfig& cfg);
  RunOutputs(const RunOutputs&) = delete;
  RunOutputs& operator=(const RunOutputs&) = delete;
  RunOutputs(RunOutputs&&) = delete;
  RunOutputs& operator=(RunOutputs&&) = delete;
  ~RunOutputs() = default;

  const RunLogs& logs() const { return logs_; }

 private:
  std::optional<serving::StepLog> steps_;
  std::optional<serving::TokenLog> tokens_;
  std::optional<serving::LayerLog> layers_;
  std::optional<serving::TimelineLog> timeline_;
  std::optional<serving::EventLog> events_;
  std::optional<serving::GpuLayerLog> gpu_layers_;
  RunLogs logs_;
};

}  // namespace epsim::experiments
