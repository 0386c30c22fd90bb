// SPDX-License-Identifier: Apache-2.0
#include "calibration/fit_error.hpp"

#include <cmath>

namespace epsim::calibration {

void add_error(ErrorSummary& s, double predicted, double measured) {
  const double e = (predicted - measured) / measured;
  const auto n = static_cast<double>(s.rows);
  s.mape = (s.mape * n + std::abs(e)) / (n + 1.0);
  s.bias = (s.bias * n + e) / (n + 1.0);
  if (std::abs(e) > std::abs(s.max_error)) {
    s.max_error = e;
  }
  ++s.rows;
}

ErrorSummary summarize_errors(std::span<const double> relative_errors) {
  ErrorSummary s;
  for (const double e : relative_errors) {
    add_error(s, 1.0 + e, 1.0);
  }
  return s;
}

}  // namespace epsim::calibration
