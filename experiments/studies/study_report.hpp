// SPDX-License-Identifier: Apache-2.0
#pragma once
// A finished study's outputs, from every run's record in run order (so the bytes do not depend on
// which worker or rank ran what): runs.csv, points.csv (mean, std, n, 95 % interval, and the paired
// difference to the baseline), distribution.csv (Monte Carlo), max_rate.csv (from the rate grid of a
// compare study), ranking.csv (the objective), and the table printed on the terminal.
#include <string>
#include <vector>

#include "experiments/studies/study_values.hpp"

namespace epsim::experiments {

std::string runs_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records);
std::string points_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records);
std::string distribution_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records);
/// What-if scaling curves: one row per point in order of GPUs (then EP size, then point), with
/// `system` and `series` (the curve it belongs to: scaling_series.hpp), `gpus`, `ep_size` and each report
/// metric's mean and 95 % interval: a metric against cluster size.
std::string scaling_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records);
/// Empty when the study has no rate axis.
std::string max_rate_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records);
/// Empty when the study has no objective.
std::string ranking_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records);
/// The terminal table: each point's report metrics (mean +- 95 % half-width), the baseline
/// differences, the max rate and the best point by the objective.
std::string study_table(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records);

}  // namespace epsim::experiments
