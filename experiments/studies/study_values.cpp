// SPDX-License-Identifier: Apache-2.0
#include "experiments/studies/study_values.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>

namespace epsim::experiments {

std::string csv_number(double x) {
  return std::isnan(x) ? std::string() : fmt::format("{}", x);
}

std::vector<double> values_of(const StudyPlan& plan, const StudyRecords& records, int point,
                              const std::string& metric) {
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(plan.replications));
  for (std::int64_t r = 0; r < plan.replications; ++r) {
    out.push_back(metric_value(records[static_cast<std::size_t>(point * plan.replications + r)].metrics, metric));
  }
  return out;
}

std::vector<double> finite(const std::vector<double>& v) {
  std::vector<double> out;
  std::copy_if(v.begin(), v.end(), std::back_inserter(out), [](double x) { return !std::isnan(x); });
  return out;
}

core::SampleSummary paired(const std::vector<double>& x, const std::vector<double>& base, core::MetricKind kind) {
  std::vector<double> a;
  std::vector<double> b;
  for (std::size_t r = 0; r < x.size() && r < base.size(); ++r) {
    if (!std::isnan(x[r]) && !std::isnan(base[r])) {
      a.push_back(x[r]);
      b.push_back(base[r]);
    }
  }
  return core::summarize_paired_difference(a, b, kind);
}

}  // namespace epsim::experiments
