#include "core/confidence.hpp"

#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "core/statistics.hpp"

namespace epsim::core {

double student_t_quantile(double level, std::int64_t dof) {
  if (dof < 1 || !(level > 0.0 && level < 1.0)) {
    throw std::invalid_argument("student_t_quantile: needs dof >= 1 and level in (0, 1)");
  }
  const boost::math::students_t dist(static_cast<double>(dof));
  return boost::math::quantile(boost::math::complement(dist, (1.0 - level) / 2.0));
}

SampleSummary summarize_sample(std::span<const double> x, double level) {
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  SampleSummary s;
  RunningStats stats;
  for (const double v : x) {
    stats.add(v);
  }
  s.n = static_cast<std::int64_t>(stats.count());
  s.mean = s.n > 0 ? stats.mean() : nan;
  if (s.n < 2) {
    s.stddev = s.ci_low = s.ci_high = nan;
    return s;
  }
  s.stddev = stats.stddev();
  const double half = student_t_quantile(level, s.n - 1) * s.stddev / std::sqrt(static_cast<double>(s.n));
  s.ci_low = s.mean - half;
  s.ci_high = s.mean + half;
  return s;
}

SampleSummary summarize_paired_difference(std::span<const double> x, std::span<const double> base, double level) {
  if (x.size() != base.size()) {
    throw std::invalid_argument("summarize_paired_difference: samples of different lengths");
  }
  std::vector<double> d(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    d[i] = x[i] - base[i];
  }
  return summarize_sample(d, level);
}

}  // namespace epsim::core
