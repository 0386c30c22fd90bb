// SPDX-License-Identifier: Apache-2.0
#pragma once
// A summary metric's report over a window, by figure name (the serving metric tests read it so).
#include <map>
#include <string>
#include <vector>

#include "sim/summary_metric.hpp"

namespace epsim::test {

inline std::map<std::string, double> figures(const serving::SummaryMetric& m, const serving::MeasuredWindow& w) {
  std::vector<serving::SummaryFigure> out;
  m.report(w, out);
  std::map<std::string, double> f;
  for (const auto& x : out) {
    f[x.name] = x.value;
  }
  return f;
}

}  // namespace epsim::test
