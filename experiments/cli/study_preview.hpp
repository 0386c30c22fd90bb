// SPDX-License-Identifier: Apache-2.0
#pragma once
// A study looked at without running it: `epsim validate STUDY.toml` (the file, every point's
// configuration and simulation, as a sweep would build them) and `epsim sweep STUDY.toml --dry-run`
// (the points, the runs, and the CPU time they will take, estimated from one short pilot run).
#include <cstdint>
#include <ostream>
#include <string>

#include "experiments/studies/study_plan.hpp"

namespace epsim::experiments {

/// Whether the TOML file at `path` is a study (it has a [study] table).
bool is_study_file(const std::string& path);

/// Loads, plans and builds every point of the study at `path` (nothing runs, nothing is written);
/// prints the plan's warnings on `err` and one "ok" line on `out`. Throws the first error.
void validate_study(const std::string& path, std::ostream& out, std::ostream& err);

/// The requests of the pilot run `sweep --dry-run` times: few enough to take seconds.
inline constexpr std::int64_t k_pilot_requests = 32;

/// Prints the study's points (labels), its runs, and the estimated CPU time: the point of the smallest
/// cost weight (study_eta.hpp) is simulated once with at most k_pilot_requests requests; its wall time
/// per unit of weight, times every run's weight, is the estimate. Writes no file.
void print_dry_run(const StudySpec& spec, const StudyPlan& plan, int jobs, std::ostream& out);

}  // namespace epsim::experiments
