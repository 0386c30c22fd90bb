// SPDX-License-Identifier: Apache-2.0
#include "core/confidence.hpp"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/statistics.hpp"

namespace epsim::core {
namespace {

constexpr double k_nan = std::numeric_limits<double>::quiet_NaN();

// The t interval of the mean of `x`, intersected with [low, high] when every value lies there.
SampleSummary bounded_summary(std::span<const double> x, MetricKind kind, double low, double high, double level) {
  SampleSummary s;
  RunningStats stats;
  bool in_range = true;
  for (const double v : x) {
    stats.add(v);
    in_range = in_range && v >= low && v <= high;
  }
  s.n = static_cast<std::int64_t>(stats.count());
  s.kind = in_range ? kind : MetricKind::unbounded;
  s.mean = s.n > 0 ? stats.mean() : k_nan;
  if (s.n < 2) {
    s.stddev = s.ci_low = s.ci_high = k_nan;
    return s;
  }
  s.stddev = stats.stddev();
  const double half = student_t_quantile(level, s.n - 1) * s.stddev / std::sqrt(static_cast<double>(s.n));
  if (!std::isfinite(s.mean) || !std::isfinite(half)) {
    s.ci_low = s.ci_high = k_nan;
    return s;
  }
  s.ci_low = s.mean - half;
  s.ci_high = s.mean + half;
  if (in_range) {
    // The mean of values in [low, high] lies there too: clamping keeps it inside its interval.
    s.ci_low = std::clamp(s.ci_low, low, high);
    s.ci_high = std::clamp(s.ci_high, low, high);
  }
  return s;
}

}  // namespace

double student_t_quantile(double level, std::int64_t dof) {
  if (dof < 1 || !(level > 0.0 && level < 1.0)) {
    throw std::invalid_argument("student_t_quantile: needs dof >= 1 and level in (0, 1)");
  }
  const boost::math::students_t dist(static_cast<double>(dof));
  return boost::math::quantile(boost::math::complement(dist, (1.0 - level) / 2.0));
}

SampleSummary summarize_sample(std::span<const double> x, MetricKind kind, double level) {
  return bounded_summary(x, kind, kind_low(kind), kind_high(kind), level);
}

SampleSummary summarize_paired_difference(std::span<const double> x, std::span<const double> base, MetricKind kind,
                                          double level) {
  if (x.size() != base.size()) {
    throw std::invalid_argument("summarize_paired_difference: samples of different lengths");
  }
  std::vector<double> d(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    d[i] = x[i] - base[i];
  }
  return bounded_summary(d, kind, difference_low(kind), difference_high(kind), level);
}

}  // namespace epsim::core
