// SPDX-License-Identifier: Apache-2.0
#pragma once
// A finished study's values: a metric of one point over its replications, and paired differences
// between two points of one replication (common random numbers), as every study output reads them.
#include <string>
#include <vector>

#include "core/confidence.hpp"
#include "core/metric_kind.hpp"
#include "experiments/studies/study_journal.hpp"
#include "experiments/studies/study_plan.hpp"

namespace epsim::experiments {

/// Every run's record, indexed by run.
using StudyRecords = std::vector<RunRecord>;

/// A number as an output cell: the shortest text that reads back to the same double; empty for NaN.
std::string csv_number(double x);
/// One value per replication of `point` (NaN where a run lacks the metric).
std::vector<double> values_of(const StudyPlan& plan, const StudyRecords& records, int point, const std::string& metric);
/// The values that are not NaN, in order.
std::vector<double> finite(const std::vector<double>& v);
/// The paired difference x - base over the replications where both are known.
core::SampleSummary paired(const std::vector<double>& x, const std::vector<double>& base, core::MetricKind kind);

}  // namespace epsim::experiments
