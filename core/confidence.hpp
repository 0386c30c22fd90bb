// SPDX-License-Identifier: Apache-2.0
#pragma once
// Sample summaries with Student-t confidence intervals: for replications of a simulation (independent
// seeds), and for paired differences between two setups run on the same seeds (common random numbers),
// whose interval is the one of the per-replication differences.
//
// A metric's kind (metric_kind.hpp) bounds its interval: the Student-t interval of the mean is
// intersected with the values the mean can take ([0, 1] for a proportion, [0, inf) for a non-negative
// quantity, [-1, 1] for a difference of proportions). The true mean always lies in that range, so the
// intersection covers it exactly as often as the t interval does, still contains the sample mean, and
// never claims an impossible value. docs/studies.md says why not Wilson, log-scale or bootstrap
// intervals (per-request outcomes are not independent; log scales estimate another mean and explode at
// n = 2-3; a bootstrap of 2-5 values under-covers).
#include <cstdint>
#include <span>

#include "core/metric_kind.hpp"

namespace epsim::core {

/// Below this many values an interval rests on too little to say much: with n = 2 the t quantile is
/// 12.7 (6.5 times the normal's 1.96) and the standard deviation comes from one degree of freedom.
/// Tables and reports flag such intervals.
constexpr std::int64_t k_min_interval_n = 3;

struct SampleSummary {
  std::int64_t n = 0;
  double mean = 0.0;
  double stddev = 0.0;  ///< sample standard deviation (n - 1); NaN for n < 2
  double ci_low = 0.0;  ///< mean -+ t(level, n - 1) * stddev / sqrt(n) within the kind's range; NaN for n < 2
  double ci_high = 0.0;
  MetricKind kind = MetricKind::unbounded;  ///< the range the interval was kept to
  bool small_n() const { return n < k_min_interval_n; }
  double half_width() const { return (ci_high - ci_low) / 2.0; }
};

/// Mean, standard deviation and the two-sided `level` confidence interval of the mean of `x`, kept
/// within the range of `kind` (NaN values are an error of the caller: pass only measured values). Empty
/// input gives n = 0, NaNs; a non-finite value gives NaN bounds. Values outside the kind's range (a
/// misclassified metric) leave the interval unbounded rather than clip a real value, and `kind` says so.
SampleSummary summarize_sample(std::span<const double> x, MetricKind kind = MetricKind::unbounded, double level = 0.95);

/// The same for the paired differences x[i] - base[i] (equal lengths) of a metric of `kind`: the
/// interval is kept within the range of such a difference ([-1, 1] for proportions).
SampleSummary summarize_paired_difference(std::span<const double> x, std::span<const double> base,
                                          MetricKind kind = MetricKind::unbounded, double level = 0.95);

/// The two-sided Student-t quantile t(level, dof): e.g. t(0.95, 4) = 2.776.
double student_t_quantile(double level, std::int64_t dof);

}  // namespace epsim::core
