// SPDX-License-Identifier: Apache-2.0
#pragma once
// `epsim run`'s and `epsim validate`'s work on one loaded experiment, shared by the command line and the
// Python module (python/): one code path, so both give the same numbers and the same messages.
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "experiments/assembly/experiment_config.hpp"
#include "sim/simulator.hpp"

namespace epsim::experiments {

struct RunRequest {
  /// The results directory, staged beside itself (checked before the simulation, swapped in whole
  /// after it); none: nothing is written and the files come back in memory.
  std::optional<std::filesystem::path> dir;
  bool report = false;               ///< also DIR/report.html and its figures (needs `dir`)
  std::ostream* progress = nullptr;  ///< progress lines once a run has taken a few seconds
  /// Called every ~0.1 s of simulating; an exception it throws ends the run (nothing written). The
  /// Python module turns a Ctrl-C into KeyboardInterrupt here.
  std::function<void()> poll;
};

struct ExperimentRun {
  serving::SimulationResult result;
  /// What the run says beside its results (the CLI prints each as "epsim: warning: ...").
  std::vector<std::string> warnings;
  /// Without a directory: every file `dir` would have held (result_files), name and content.
  std::vector<std::pair<std::string, std::string>> files;
  std::filesystem::path report_file;  ///< DIR/report.html when asked for
  double wall_s = 0.0;                ///< building and simulating
};

/// Builds the simulation of `cfg`, runs it and writes (or returns) its results, as `epsim run` does.
/// `cfg` is the run's as given: with `request.report` the step, event and GPU-layer logs are turned on.
ExperimentRun run_experiment(ExperimentConfig cfg, const RunRequest& request);

/// The check of `epsim validate CONFIG`: the simulation built (placement, cost curves, memory plan,
/// inputs, every replayed row read) but not run; returns its "SOURCE: ok (...)" line.
std::string validate_experiment(const ExperimentConfig& cfg);

}  // namespace epsim::experiments
