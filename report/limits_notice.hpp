// SPDX-License-Identifier: Apache-2.0
#pragma once
// A visible note when configured caps, not the hardware, held runs back (summary.json's metrics.limits,
// docs/serving.md): which cap, for which point or run, in what share of the measured rank-steps, at the
// offered load and at a max-rate search's first missed rate. Empty when no cap reached its threshold.
#include <string>
#include <vector>

#include "report/report_inputs.hpp"

namespace epsim::report {

/// From points.csv's `limits.<cap>.binding_fraction` and `max_rate_limits.<cap>.binding_fraction`
/// means, against `limits.threshold`.
std::string study_limits_html(const StudyInput& study);
/// From each summary.json's metrics.limits.
std::string runs_limits_html(const std::vector<RunInput>& runs);

}  // namespace epsim::report
