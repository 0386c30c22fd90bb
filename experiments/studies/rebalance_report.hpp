// SPDX-License-Identifier: Apache-2.0
#pragma once
// A rebalance study's outputs. rebalance.csv: every point's throughput (output tokens/s over the run),
// TPOT and balance with the paired change against rebalancing off at the same other levels, and what the
// migrations cost; break_even.csv: per migration mode (and other levels), the interval from which
// rebalancing pays in throughput, read off the change-vs-interval curve and its 95 % bands.
#include <string>

#include "experiments/studies/study_values.hpp"

namespace epsim::experiments {

/// Where a change-vs-interval curve first reaches 0 from below, interpolated in log(interval).
struct BreakEven {
  enum class Status : std::uint8_t { crosses, pays_from_first, never_pays, unknown };
  Status status = Status::unknown;
  double interval = 0.0;  ///< crosses: the interpolated interval; pays_from_first: the smallest interval
};

/// The break-even of changes `gain` (NaN: unknown) at ascending `intervals`: the first interval whose
/// change is >= 0, interpolated between it and the one before, whose change is < 0.
BreakEven break_even(const std::vector<std::int64_t>& intervals, const std::vector<double>& gain);
std::string_view to_string(BreakEven::Status s);

/// Empty unless the study is of kind rebalance.
std::string rebalance_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records);
std::string break_even_csv(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records);
/// The break-evens as lines for the terminal table.
std::string break_even_lines(const StudySpec& spec, const StudyPlan& plan, const StudyRecords& records);

}  // namespace epsim::experiments
