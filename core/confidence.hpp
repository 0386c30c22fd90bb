#pragma once
// Sample summaries with Student-t confidence intervals: for replications of a simulation (independent
// seeds), and for paired differences between two setups run on the same seeds (common random numbers),
// whose interval is the one of the per-replication differences.
#include <cstdint>
#include <span>

namespace epsim::core {

struct SampleSummary {
  std::int64_t n = 0;
  double mean = 0.0;
  double stddev = 0.0;  ///< sample standard deviation (n - 1); NaN for n < 2
  double ci_low = 0.0;  ///< mean -+ t(level, n - 1) * stddev / sqrt(n); NaN for n < 2
  double ci_high = 0.0;
  double half_width() const { return (ci_high - ci_low) / 2.0; }
};

/// Mean, standard deviation and the two-sided `level` confidence interval of the mean of `x` (NaN
/// values are an error of the caller: pass only measured values). Empty input gives n = 0, NaNs.
SampleSummary summarize_sample(std::span<const double> x, double level = 0.95);

/// The same for the paired differences x[i] - base[i] (equal lengths).
SampleSummary summarize_paired_difference(std::span<const double> x, std::span<const double> base, double level = 0.95);

/// The two-sided Student-t quantile t(level, dof): e.g. t(0.95, 4) = 2.776.
double student_t_quantile(double level, std::int64_t dof);

}  // namespace epsim::core
