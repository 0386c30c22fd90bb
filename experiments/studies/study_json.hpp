// SPDX-License-Identifier: Apache-2.0
#pragma once
// study.json: the resolved study, written beside a sweep's tables.
#include <cstdint>
#include <string>

#include "experiments/studies/study_report.hpp"

namespace epsim::experiments {

/// The resolved study: version, kind, base, axes and levels, replications, seed families, every run's
/// seeds, and `timings` (the only part that is not deterministic).
std::string study_json(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records, double wall_s,
                       std::int64_t reused_runs);

}  // namespace epsim::experiments
