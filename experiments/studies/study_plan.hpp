// SPDX-License-Identifier: Apache-2.0
#pragma once
// A study expanded into points and runs: the product of the axes (zipped axes follow their partner),
// each point's overrides merged over the base and its configuration loaded and validated before any
// run starts, and every run (point x replication) with its seeds and a key that identifies its result
// in the journal (a hash of everything the result depends on).
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/assembly/experiment_config.hpp"
#include "experiments/studies/study_spec.hpp"

namespace epsim::experiments {

struct StudyPoint {
  int index = 0;
  std::vector<std::size_t> level;   ///< per axis: the level's index
  std::vector<std::string> labels;  ///< per axis: the level's label
  ExperimentConfig config;          ///< replication 0's configuration (seeds as the base gives them)
};

struct StudyRunSpec {
  std::int64_t index = 0;  ///< point * replications + replication
  int point = 0;
  std::int64_t replication = 0;
};

struct StudyPlan {
  std::vector<StudyPoint> points;
  std::vector<std::string> warnings;  ///< the points' config warnings, each once
  std::int64_t replications = 1;
  std::int64_t runs() const { return static_cast<std::int64_t>(points.size()) * replications; }
  StudyRunSpec run(std::int64_t index) const {
    return {index, static_cast<int>(index / replications), index % replications};
  }
};

/// Expands and validates every point (throws core::ConfigError naming the study, the point and the key).
StudyPlan plan_study(const StudySpec& spec);

/// The configuration of one run: its point's, with the replication's seeds (common random numbers:
/// replication r has the same seeds at every point; otherwise seeds also differ by point).
ExperimentConfig run_config(const StudySpec& spec, const StudyPlan& plan, const StudyRunSpec& run);

/// What identifies a run's result: a hash of its effective configuration, seeds, the max-rate options
/// and the epsim version (16 hex digits).
std::string run_key(const StudySpec& spec, const ExperimentConfig& cfg);

}  // namespace epsim::experiments
