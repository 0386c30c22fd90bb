// SPDX-License-Identifier: Apache-2.0
#pragma once
// The figures a study directory supports, chosen by what it holds: attainment and latency against the
// arrival rate (a rate axis), the max sustainable rate per group (max_rate.csv or a [study.max_rate]
// search), scaling curves (scaling.csv), Monte Carlo distributions (ECDFs over replications), the change
// against the baseline with paired intervals, and latency CDFs from saved runs.
#include <vector>

#include "report/figure.hpp"
#include "report/report_inputs.hpp"

namespace epsim::report {

std::vector<Figure> study_figures(const StudyInput& study);

}  // namespace epsim::report
