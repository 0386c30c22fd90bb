// SPDX-License-Identifier: Apache-2.0
#pragma once
// Error summaries of a model against measurements: relative errors (predicted - measured) / measured,
// summarised as MAPE, the largest error by magnitude (signed) and the bias (mean signed error).
#include <cstddef>
#include <span>

namespace epsim::calibration {

struct ErrorSummary {
  std::size_t rows = 0;
  double mape = 0.0;       ///< mean |relative error|, as a fraction (0.05 = 5 %)
  double max_error = 0.0;  ///< the relative error of largest magnitude, signed
  double bias = 0.0;       ///< mean relative error: > 0 the model is slow, < 0 fast
};

/// Adds one row's relative error.
void add_error(ErrorSummary& s, double predicted, double measured);
/// The summary of a list of relative errors.
ErrorSummary summarize_errors(std::span<const double> relative_errors);

}  // namespace epsim::calibration
