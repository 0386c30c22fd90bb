// SPDX-License-Identifier: Apache-2.0
#pragma once
// study.json: the resolved study, written beside a sweep's tables.
#include <cstdint>
#include <string>

#include "experiments/studies/study_report.hpp"

namespace epsim::experiments {

/// The resolved study: version, kind, base, axes and levels, replications, seed families, every run's
/// seeds, and `timings` (the only part that is not deterministic): the sweep's wall and process CPU
/// time, each run's wall and CPU time and their sums.
struct StudyTimings {
  double wall_s = 0.0;
  double cpu_s = 0.0;  ///< the sweep process's CPU time, every thread (rank 0's under MPI)
  std::int64_t reused_runs = 0;
};
std::string study_json(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records,
                       const StudyTimings& timings);

}  // namespace epsim::experiments
